/**
 * JSON-lines logging on pino (docs/api.md#logs-and-metrics). One line per call:
 * `{"level", "time" (ISO-8601), ...bindings, ...fields, "msg"}`. The HTTP layer adds the request id
 * with `logger.child({ request_id })`. Every field bag and binding passes through `redactFields`
 * (src/observability/redaction.ts) and every message through `scrubString`, so no credential, key,
 * signature or stack trace reaches a line. Logging never throws.
 */
import pino from "pino";
import { redactFields, scrubString } from "./redaction.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  readonly level: LogLevel;
  isEnabled(level: LogLevel): boolean;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry `fields` (later call fields win on a clash). */
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Receives each line without the trailing newline. Default: standard output. */
  sink?: (line: string) => void;
}

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

class PinoLogger implements Logger {
  constructor(
    readonly level: LogLevel,
    private readonly p: pino.Logger,
  ) {}

  isEnabled(level: LogLevel): boolean {
    return this.p.isLevelEnabled(level);
  }
  debug(msg: string, fields?: Record<string, unknown>): void {
    this.write("debug", msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.write("info", msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.write("warn", msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.write("error", msg, fields);
  }
  child(fields: Record<string, unknown>): Logger {
    try {
      return new PinoLogger(this.level, this.p.child(redactFields(fields)));
    } catch {
      return this;
    }
  }

  private write(level: LogLevel, msg: string, fields: Record<string, unknown> | undefined): void {
    if (!this.p.isLevelEnabled(level)) return;
    try {
      this.p[level](fields ?? {}, typeof msg === "string" ? scrubString(msg) : scrubString(String(msg)));
    } catch {
      // A broken sink or an unserializable value must not break the request that logs.
    }
  }
}

export function createLogger(opts: LoggerOptions): Logger {
  const level: LogLevel = LEVELS.includes(opts?.level) ? opts.level : "info";
  const sink = opts?.sink;
  const destination: pino.DestinationStream = sink
    ? {
        write(line: string) {
          try {
            sink(line.endsWith("\n") ? line.slice(0, -1) : line);
          } catch {
            // see write()
          }
        },
      }
    : pino.destination({ dest: 1, sync: true });
  const p = pino(
    {
      level,
      base: null,
      messageKey: "msg",
      // pino's own `err` serializer would add the stack; redactFields has made errors {name, message}.
      serializers: { err: (e: unknown) => e },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: (fields) => redactFields(fields) },
    },
    destination,
  );
  return new PinoLogger(level, p);
}
