/** A text[] parameter's text: each element quoted (a quote or backslash escaped). */
export function pgTextArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
}
