/** A repeatable option whose values may also be comma-separated, as realm-cli's string slices read them. */
export function collectList(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').map((item) => item.trim()).filter(Boolean)];
}
