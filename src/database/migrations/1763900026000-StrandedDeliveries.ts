import { Logger } from '@nestjs/common';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Before claims checked again, in a new snapshot, the turns they had moved
 * (RECHECK_TURNS in delivery-queue.repository.ts), a publication that
 * committed while a claim read the queue could be left behind its
 * subscription's position, where no claim looks: such a delivery waits in
 * the queue, never sent. Each position moves back to its subscription's
 * oldest waiting delivery, so those deliveries are claimed again, in their
 * place. A turn parked with a delivery waiting needs nothing: a park ends on
 * its own. The queue holds only what is not final, so this reads little.
 */
export class StrandedDeliveries1763900026000 implements MigrationInterface {
  name = 'StrandedDeliveries1763900026000';
  private readonly logger = new Logger('StrandedDeliveries');

  async up(queryRunner: QueryRunner): Promise<void> {
    const moved = (await queryRunner.query(`
      UPDATE webhook_delivery_turn t SET from_seq = m.seq
        FROM (SELECT subscription_id, min(seq) AS seq FROM webhook_delivery
               WHERE status = 'pending' GROUP BY subscription_id) m
       WHERE t.subscription_id = m.subscription_id AND t.from_seq > m.seq
      RETURNING t.subscription_id`)) as [unknown[], number];
    const count = moved[1];
    if (count > 0) this.logger.log(`webhook subscriptions with deliveries behind their position, moved back: ${count}`);
  }

  /** Nothing to undo: a position before a waiting delivery is where the claims expect it. */
  async down(): Promise<void> {}
}
