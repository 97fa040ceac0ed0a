import { Injectable } from '@nestjs/common';
import { WebhookFiguresRepository, type WebhookFigures } from './webhook-figures.repository';

export type { WebhookFigures } from './webhook-figures.repository';

/** The figures Webhooks gives monitoring (the metrics endpoint), read from its own tables. */
@Injectable()
export class WebhookFiguresService {
  constructor(private readonly figures: WebhookFiguresRepository) {}

  /** The outbox's backlog and lag and the disabled subscriptions, as of now. */
  async current(): Promise<WebhookFigures> {
    return this.figures.read();
  }

  /** Dead row versions in the delivery queue's table, as of the last statistics report. */
  async queueDeadRows(): Promise<number> {
    return this.figures.queueDeadRows();
  }
}
