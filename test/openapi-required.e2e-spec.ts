import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { readContractSections, type ContractSection, type ContractTable } from './support/contract-tables';
import { OpenApiContract } from './support/openapi-contract';
import { withApp } from './support/with-app';

type Json = Record<string, any>;

const app = withApp();
let document: Json;
let contract: OpenApiContract;
let sections: ContractSection[];

before(async () => {
  document = (await (await fetch(`${app.service.publicUrl}/openapi.json`)).json()) as Json;
  contract = new OpenApiContract(document);
  sections = readContractSections();
});

const schema = (name: string): Json => contract.resolve({ $ref: `#/components/schemas/${name}` });
const jsonSchema = (holder: Json): Json =>
  contract.resolve(contract.resolve(holder)['content']['application/json'].schema);
const success = (path: string): Json => jsonSchema(document['paths'][path].get.responses['200']);
const requestBody = (path: string, method: string): Json => jsonSchema(document['paths'][path][method].requestBody);
const deliveries = (): Json[] =>
  Object.values(document['webhooks'] as Json).map((hook: Json) => jsonSchema(hook['post'].requestBody));
const deliveryData = (type: string): Json =>
  contract.resolve(jsonSchema(document['webhooks'][type].post.requestBody)['properties'].data);

/**
 * Where each of the contract's response tables lives in the document, by the
 * section's title up to its first parenthesis. Every member these tables list
 * is always present (a nullable one as `null`), so it must be `required`.
 */
const RESPONSE_TABLES: Record<string, () => Json[]> = {
  Principal: () => [schema('Principal')],
  'Page envelope': () =>
    Object.keys(document['components'].schemas as Json)
      .filter((name) => name.endsWith('Page'))
      .map(schema),
  Event: () => [schema('Event')],
  Order: () => [schema('Order')],
  Venue: () => [schema('Venue')],
  Webhook: () => [schema('Webhook')],
  'Webhook delivery envelope': deliveries,
  'Error body': () => [schema('Error')],
  'GET /v1': () => [success('/v1')],
  'GET /v1/me': () => [contract.resolve(success('/v1/me')['properties'].data)],
  'order.confirmed': () => [deliveryData('order.confirmed')],
  'event.published': () => [deliveryData('event.published')],
};

/**
 * The request tables: a body field is required only where the contract says so
 * (a "Required" column, or a "Required on create"/"Required on update" note),
 * and then exactly those fields.
 */
const REQUEST_TABLES: Record<
  string,
  (table: ContractTable) => Array<{ where: string; body: Json; required: string[] }>
> = {
  EventPatch: (table) => [
    {
      where: 'POST /v1/events body',
      body: requestBody('/v1/events', 'post'),
      required: noted(table, /Required on create/),
    },
    {
      where: 'PATCH /v1/events/{eventId} body',
      body: requestBody('/v1/events/{eventId}', 'patch'),
      required: noted(table, /Required on update/),
    },
  ],
  'POST /v1/webhooks': (table) => {
    const column = table.header.indexOf('Required');
    assert.ok(column > 0, 'the POST /v1/webhooks body table has a Required column');
    return [
      {
        where: 'POST /v1/webhooks body',
        body: requestBody('/v1/webhooks', 'post'),
        required: table.rows.filter((row) => /^yes\b/.test(row[column] ?? '')).map(nameOf),
      },
    ];
  },
};

const nameOf = (row: string[]): string => (row[0] ?? '').replace(/`/g, '');
const noted = (table: ContractTable, note: RegExp): string[] =>
  table.rows.filter((row) => row.slice(1).some((cell) => note.test(cell))).map(nameOf);
const keyOf = (title: string): string => title.replace(/\s*\(.*$/, '');
/** A table of members: its first column names fields (`Field`) or members (`Member`). */
const isMemberTable = (table: ContractTable | undefined): table is ContractTable =>
  table !== undefined && ['Field', 'Member'].includes(table.header[0] ?? '');

/**
 * Members the contract lists inside one row, which are always present too:
 * `object: \`style\` (…), \`parameters\` (…)` in a Type cell, or
 * `Each has \`id\` (string), \`displayName\`, …` in a Notes cell of an array.
 */
function nestedMembers(row: string[]): { members: string[]; inItems: boolean } | null {
  const type = row[1] ?? '';
  if (type.startsWith('object:')) {
    return { members: [...type.matchAll(/`(\w+)` \(/g)].map((match) => match[1] ?? ''), inItems: false };
  }
  const each = /Each has (.+?)\./.exec(row.slice(2).join(' '));
  if (each !== null && type.startsWith('array')) {
    return { members: [...(each[1] ?? '').matchAll(/`(\w+)`/g)].map((match) => match[1] ?? ''), inItems: true };
  }
  return null;
}

function missingRequired(where: string, target: Json, members: string[]): string[] {
  const required = new Set<string>((target['required'] ?? []) as string[]);
  const properties = (target['properties'] ?? {}) as Json;
  return members.flatMap((member) => [
    ...(member in properties ? [] : [`${where}: no property ${member}`]),
    ...(required.has(member) ? [] : [`${where}: ${member} is always present but not required`]),
  ]);
}

describe('the OpenAPI document’s required members', () => {
  it('marks as required every member the contract’s response tables say is always present', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const section of sections.filter((one) => one.level === 3)) {
      const locate = RESPONSE_TABLES[keyOf(section.title)];
      const table = section.tables[0];
      if (locate === undefined || !isMemberTable(table)) continue;
      const targets = locate();
      assert.ok(targets.length > 0, `${section.title}: found in the document`);
      for (const [index, target] of targets.entries()) {
        const where = `${keyOf(section.title)}${targets.length > 1 ? ` #${index + 1}` : ''}`;
        problems.push(...missingRequired(where, target, table.rows.map(nameOf)));
        checked += table.rows.length;
        for (const row of table.rows) {
          const nested = nestedMembers(row);
          const property = target['properties']?.[nameOf(row)] as Json | undefined;
          if (nested === null || property === undefined) continue;
          const resolved = contract.resolve(property);
          const inner = nested.inItems ? contract.resolve(resolved['items'] as Json) : resolved;
          problems.push(...missingRequired(`${where}.${nameOf(row)}`, inner, nested.members));
          checked += nested.members.length;
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(checked > 80, `${checked} members checked`);
  });

  it('requires exactly the request body fields the contract marks as required (startTime on create only)', () => {
    const problems: string[] = [];
    for (const section of sections.filter((one) => one.level === 3)) {
      const locate = REQUEST_TABLES[keyOf(section.title)];
      const table = section.tables[0];
      if (locate === undefined || !isMemberTable(table)) continue;
      for (const { where, body, required } of locate(table)) {
        const actual = [...((body['required'] ?? []) as string[])].sort();
        if (JSON.stringify(actual) !== JSON.stringify([...required].sort())) {
          problems.push(`${where}: required ${JSON.stringify(actual)}, the contract says ${JSON.stringify(required)}`);
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(requestBody('/v1/events', 'post')['required'], ['startTime']);
  });

  it('checks every table of members in the contract, so a new resource or response cannot go unchecked', () => {
    const unchecked = sections
      .filter((section) => section.level === 3 && isMemberTable(section.tables[0]))
      .map((section) => keyOf(section.title))
      .filter((key) => RESPONSE_TABLES[key] === undefined && REQUEST_TABLES[key] === undefined);
    assert.deepEqual(unchecked, []);
    const covered = sections.filter((section) => section.level === 3 && isMemberTable(section.tables[0])).length;
    assert.ok(covered >= 14, `${covered} tables read from the contract`);
  });
});
