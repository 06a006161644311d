/**
 * The recent-events feed of the MCP server: a background subscription to the service's event stream
 * (through the SDK's reconnecting iterator) that keeps the last events of the agent in memory, for the
 * `broker://events/recent` resource. A service without the stream is reported, not retried forever.
 */
import { BrokerError, type BrokerClient, type BrokerEvent } from "@agent-brokerage/sdk";

export class RecentEvents {
  private readonly events: BrokerEvent[] = [];
  private readonly stop = new AbortController();
  private state: { status: "connecting" | "live" | "unavailable"; detail?: string } = { status: "connecting" };

  constructor(
    private readonly client: BrokerClient,
    private readonly agentId: string,
    private readonly keep = 100,
  ) {}

  start(): this {
    void this.run();
    return this;
  }

  private async run(): Promise<void> {
    try {
      for await (const ev of this.client.events({ agent_id: this.agentId, signal: this.stop.signal, onOpen: () => (this.state = { status: "live" }) })) {
        this.events.push(ev);
        if (this.events.length > this.keep) this.events.shift();
      }
    } catch (err) {
      if (this.stop.signal.aborted) return;
      this.state = { status: "unavailable", detail: err instanceof BrokerError ? `${err.status} ${err.code}` : err instanceof Error ? err.message : String(err) };
    }
  }

  snapshot(): { stream: string; detail?: string; events: BrokerEvent[] } {
    return { stream: this.state.status, ...(this.state.detail ? { detail: this.state.detail } : {}), events: [...this.events] };
  }

  close(): void {
    this.stop.abort();
  }
}
