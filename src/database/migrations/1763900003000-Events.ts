import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Events1763900003000 implements MigrationInterface {
  name = 'Events1763900003000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE event (
        id text COLLATE "C" PRIMARY KEY,
        organizer_id text COLLATE "C" REFERENCES organiser (id) ON DELETE SET NULL,
        visibility text CHECK (visibility IN ('draft', 'unlisted', 'cancelled', 'public')),
        title jsonb,
        description jsonb,
        start_time timestamptz(3),
        end_time timestamptz(3),
        date_only boolean NOT NULL DEFAULT false,
        location_id text COLLATE "C",
        additional_location_ids text[] NOT NULL DEFAULT '{}',
        planning jsonb,
        online_meeting jsonb,
        image_blob_name text,
        image_blob_names text[],
        tags text[],
        subtags text[],
        languages text[],
        metadata jsonb,
        theme_color text,
        secondary_theme_color text,
        background_style text,
        color_mode text,
        background_color text,
        heading_font text,
        title_font_scale double precision,
        background_primary_color text,
        background_params jsonb,
        plasma_preset jsonb,
        hide_location boolean NOT NULL DEFAULT false,
        hide_related_events boolean NOT NULL DEFAULT false,
        group_size_override jsonb,
        series_id text,
        links jsonb,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        first_published_at timestamptz(3),
        editorial_tier text,
        group_size_min integer,
        group_size_ideal integer,
        group_size_max integer,
        group_size_uncapped boolean,
        access_password_hash text,
        access_password_salt text,
        priority integer,
        embedding real[],
        has_embedding boolean NOT NULL DEFAULT false,
        ticketing jsonb,
        template_id text,
        venue_id text COLLATE "C",
        refund_offer jsonb
      )`);
    // One index behind each ordering of each visible set (organiser and venue views).
    await queryRunner.query(
      `CREATE INDEX event_organiser_start_idx ON event (organizer_id, start_time DESC, id DESC) WHERE start_time IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX event_organiser_updated_idx ON event (organizer_id, updated_at, id) WHERE start_time IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX event_location_start_idx ON event (location_id, start_time DESC, id DESC) WHERE start_time IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX event_location_updated_idx ON event (location_id, updated_at, id) WHERE start_time IS NOT NULL`,
    );
    await queryRunner.query(`CREATE INDEX venue_location_venue_idx ON venue_location (venue_id)`);
    await queryRunner.query(`
      CREATE TABLE idempotency_key (
        organizer_id text COLLATE "C" NOT NULL,
        key text NOT NULL,
        state text NOT NULL CHECK (state IN ('pending', 'succeeded')),
        request_fingerprint text NOT NULL,
        response_status integer,
        response_headers jsonb,
        response_body text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (organizer_id, key)
      )`);
    await queryRunner.query(`CREATE INDEX idempotency_key_created_idx ON idempotency_key (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_key`);
    await queryRunner.query(`DROP INDEX venue_location_venue_idx`);
    await queryRunner.query(`DROP TABLE event`);
  }
}
