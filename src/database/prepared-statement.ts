import { createHash } from 'node:crypto';

/**
 * One SQL text with the name PostgreSQL keeps its prepared form under. The
 * name is derived from the text, so one text is one statement on every pooled
 * connection (pg refuses a name reused for another text), and nobody has to
 * keep a list of names unique by hand. Build statements once, at module load
 * or in a constructor, never per request.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

export function preparedStatement(text: string): PreparedStatement {
  // 20 hex digits of SHA-1: collisions are out of reach, and the name stays far under NAMEDATALEN (63).
  return { name: `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text };
}
