import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';

/**
 * Names this application instance in the payload of the outbox's NOTIFY. The
 * outbox wakes its own instance's worker in process, right after the commit;
 * the echo of its own NOTIFY would only start a second, empty claim, so the
 * listener ignores notifications that carry this id.
 * One per application, not per process: tests run several in one process.
 */
@Injectable()
export class OutboxSenderId {
  readonly id = randomUUID();
}
