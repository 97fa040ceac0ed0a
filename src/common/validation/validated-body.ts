import { Body } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ApiBody } from '@nestjs/swagger';
import { BodyValidationPipe, createValidationPipe } from './validation.pipe';

/** The one body pipe (validation.pipe.ts), shared by every handler that takes a body. */
const BODY_PIPE = createValidationPipe();

/**
 * The request body, through the body pipe. Every handler takes its body this
 * way: start-up refuses a bare `@Body()` (`unvalidatedInputsOf`), so a
 * forgotten pipe cannot let a body in unchecked.
 *
 * Why not a global pipe (`APP_PIPE`): Nest runs a global pipe on every path
 * parameter and custom parameter decorator too (`@Param`, `@Auth`), through
 * half a dozen promises each per request, for values it never changes: CPU
 * that `npm run bench -- side-by-side` shows on every read such as
 * `GET /v1/events/{id}`.
 *
 * `optional: true` when every field has a default: the request may then come
 * without a body, or with an empty one under `Content-Type: application/json`
 * (see `EmptyBodyRoutes`), and the reference says the body is optional.
 */
export function ValidatedBody(options: { optional?: boolean } = {}): ParameterDecorator {
  const body = Body(BODY_PIPE);
  return (target, handler, index) => {
    body(target, handler, index);
    if (options.optional !== true || handler === undefined) return;
    Reflect.defineMetadata(OPTIONAL_BODY, true, target, handler);
    const types = (Reflect.getMetadata('design:paramtypes', target, handler) ?? []) as unknown[];
    const descriptor = Object.getOwnPropertyDescriptor(target, handler);
    if (descriptor !== undefined) {
      ApiBody({ required: false, type: types[index] as never })(target, handler, descriptor);
    }
  };
}

const OPTIONAL_BODY = 'validated-body:optional';

/**
 * What a handler does with a request body: `none` (no body parameter),
 * `optional` (`@ValidatedBody({ optional: true })`: every field has a
 * default) or `required`. An empty body counts as no body unless `required`.
 */
export type BodyUse = 'none' | 'optional' | 'required';

export function bodyUseOf(prototype: object, handler: string): BodyUse {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, prototype.constructor, handler) ?? {}) as Record<
    string,
    unknown
  >;
  if (!Object.keys(args).some((key) => key.split(':')[0] === BODY)) return 'none';
  return Reflect.getMetadata(OPTIONAL_BODY, prototype, handler) === true ? 'optional' : 'required';
}

type ControllerClass = abstract new (...args: never[]) => unknown;

/** One parameter a handler takes from the request, as its decorators recorded it. */
export interface HandlerInput {
  /** `Controller.handler`. */
  where: string;
  /** Nest's `RouteParamtypes` value (as text: custom decorators have their own keys). */
  kind: string;
  /** The declared type (`design:paramtypes`), undefined when none was emitted. */
  type: unknown;
  pipes: readonly unknown[];
}

/** Every request input of every handler of these controllers. */
export function handlerInputsOf(controllers: readonly ControllerClass[]): HandlerInput[] {
  const inputs: HandlerInput[] = [];
  for (const controller of controllers) {
    const prototype = controller.prototype as object;
    for (const handler of Object.getOwnPropertyNames(prototype)) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) ?? {}) as Record<
        string,
        { index: number; pipes?: unknown[] }
      >;
      const types = (Reflect.getMetadata('design:paramtypes', prototype, handler) ?? []) as unknown[];
      for (const [key, argument] of Object.entries(args)) {
        inputs.push({
          where: `${controller.name}.${handler}`,
          kind: key.split(':')[0] ?? '',
          type: types[argument.index],
          pipes: argument.pipes ?? [],
        });
      }
    }
  }
  return inputs;
}

/** Declared types a path or query value may have: no pipe converts them, so they arrive as text. */
const UNCONVERTED_TYPES: unknown[] = [String, Object, undefined];
const BODY = String(RouteParamtypes.BODY);
const TEXT_INPUTS = [String(RouteParamtypes.PARAM), String(RouteParamtypes.QUERY)];

/**
 * The handler inputs that would reach a handler unchecked, as
 * `Controller.handler: reason`: a `@Body()` without the body pipe, or a path
 * or query value declared as anything but text (a number, say), which no
 * pipe converts: the handler would get text typed as something else.
 */
export function unvalidatedInputsOf(controllers: readonly ControllerClass[]): string[] {
  return handlerInputsOf(controllers).flatMap(({ where, kind, type, pipes }) => {
    if (kind === BODY && !pipes.some((pipe) => pipe instanceof BodyValidationPipe)) {
      return [`${where}: @Body() without @ValidatedBody()`];
    }
    if (TEXT_INPUTS.includes(kind) && !UNCONVERTED_TYPES.includes(type)) {
      return [`${where}: a path or query value declared as ${String((type as { name?: string })?.name)}, not text`];
    }
    return [];
  });
}
