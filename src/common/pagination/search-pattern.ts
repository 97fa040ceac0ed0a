/** An ILIKE pattern matching text that contains `term` literally (its `%`, `_` and `\` escaped). */
export function containsPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`;
}
