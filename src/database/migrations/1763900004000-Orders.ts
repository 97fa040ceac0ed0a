import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Number.MAX_SAFE_INTEGER: every bigint the API reads back must be exact as a JSON number. */
const MAX_SAFE = '9007199254740991';

export class Orders1763900004000 implements MigrationInterface {
  name = 'Orders1763900004000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // "order" is a reserved word, hence the quotes wherever the table is named.
    // organizer_id copies event.organizer_id (an organiser owns an order when
    // it owns the order's event), so GET /v1/orders is one index scan instead
    // of a join across every event of the organiser. The triggers below keep
    // the copy equal to the event's owner.
    await queryRunner.query(`
      CREATE TABLE "order" (
        id text COLLATE "C" PRIMARY KEY,
        event_id text COLLATE "C" REFERENCES event (id) ON DELETE SET NULL,
        organizer_id text COLLATE "C",
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed', 'failed', 'abandoned')),
        is_rsvp boolean NOT NULL DEFAULT false,
        quantity bigint NOT NULL CHECK (quantity BETWEEN 0 AND ${MAX_SAFE}),
        total_amount_minor bigint NOT NULL CHECK (total_amount_minor BETWEEN 0 AND ${MAX_SAFE}),
        currency text,
        billing_name text,
        billing_email text,
        attribution_source text,
        payment_provider text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE order_line_item (
        order_id text COLLATE "C" NOT NULL REFERENCES "order" (id) ON DELETE CASCADE,
        position integer NOT NULL CHECK (position >= 0),
        quantity bigint NOT NULL CHECK (quantity BETWEEN 0 AND ${MAX_SAFE}),
        unit_amount_minor bigint CHECK (unit_amount_minor BETWEEN 0 AND ${MAX_SAFE}),
        PRIMARY KEY (order_id, position)
      )`);

    // One index behind each ordering of each list; only confirmed orders are ever listed.
    await queryRunner.query(
      `CREATE INDEX order_organiser_created_idx ON "order" (organizer_id, created_at DESC, id DESC) WHERE status = 'confirmed'`,
    );
    await queryRunner.query(
      `CREATE INDEX order_organiser_updated_idx ON "order" (organizer_id, updated_at, id) WHERE status = 'confirmed'`,
    );
    await queryRunner.query(
      `CREATE INDEX order_event_created_idx ON "order" (event_id, created_at DESC, id DESC) WHERE status = 'confirmed'`,
    );
    await queryRunner.query(
      `CREATE INDEX order_event_updated_idx ON "order" (event_id, updated_at, id) WHERE status = 'confirmed'`,
    );
    // Every status: what the ownership triggers and the event foreign key look up.
    await queryRunner.query(`CREATE INDEX order_event_idx ON "order" (event_id)`);

    // The owner copy follows the event. On delete this must run BEFORE the
    // foreign key's SET NULL, which would otherwise clear event_id first and
    // leave the order listed for its old organiser with no event. An owner
    // change (including the event's organiser being deleted) moves the orders.
    await queryRunner.query(`
      CREATE FUNCTION order_follows_event_owner() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          UPDATE "order" SET event_id = NULL, organizer_id = NULL WHERE event_id = OLD.id;
          RETURN OLD;
        END IF;
        UPDATE "order" SET organizer_id = NEW.organizer_id
          WHERE event_id = NEW.id AND organizer_id IS DISTINCT FROM NEW.organizer_id;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER order_follows_event_delete BEFORE DELETE ON event
        FOR EACH ROW EXECUTE FUNCTION order_follows_event_owner()`);
    await queryRunner.query(`
      CREATE TRIGGER order_follows_event_owner_change AFTER UPDATE OF organizer_id ON event
        FOR EACH ROW WHEN (OLD.organizer_id IS DISTINCT FROM NEW.organizer_id)
        EXECUTE FUNCTION order_follows_event_owner()`);

    // Line items are facts of the sale: written once with their order, never changed.
    await queryRunner.query(`
      CREATE FUNCTION order_line_item_is_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'order line items are immutable';
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER order_line_item_immutable BEFORE UPDATE ON order_line_item
        FOR EACH ROW EXECUTE FUNCTION order_line_item_is_immutable()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER order_follows_event_owner_change ON event`);
    await queryRunner.query(`DROP TRIGGER order_follows_event_delete ON event`);
    await queryRunner.query(`DROP TABLE order_line_item`);
    await queryRunner.query(`DROP TABLE "order"`);
    await queryRunner.query(`DROP FUNCTION order_line_item_is_immutable()`);
    await queryRunner.query(`DROP FUNCTION order_follows_event_owner()`);
  }
}
