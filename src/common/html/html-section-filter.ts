import type { ArgumentsHost, ExceptionFilter, OnModuleInit } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Listener } from '../http/listener';
import {
  answerException,
  type HtmlSection,
  type HtmlSections,
  type SectionAnswers,
  type SectionRefusal,
} from './html-sections';

/**
 * The exception filter of a section whose pages answer people (the
 * dashboard, the portal): it registers the section once its pages can be
 * rendered, and answers every exception of its handlers through
 * answerException. A section says where it lives, its words, and how its
 * error page looks.
 */
export abstract class HtmlSectionFilter implements ExceptionFilter, HtmlSection, OnModuleInit {
  abstract readonly base: string;
  abstract readonly listener: Listener;
  protected abstract readonly answers: SectionAnswers;

  constructor(private readonly sections: HtmlSections) {}

  onModuleInit(): void {
    this.sections.add(this);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    answerException(this, this.answers, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), exception);
  }

  abstract showRefusal(request: FastifyRequest, reply: FastifyReply, refusal: SectionRefusal): void | Promise<unknown>;
}
