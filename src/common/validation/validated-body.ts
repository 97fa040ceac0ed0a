import { Body } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
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
 * half a dozen promises each per request, for values it never changes. That
 * was 4% of the CPU of `GET /v1/events/{id}` (bench, A/B, README "Performance").
 */
export function ValidatedBody(): ParameterDecorator {
  return Body(BODY_PIPE);
}

type ControllerClass = abstract new (...args: never[]) => unknown;

interface RouteArgument {
  index: number;
  pipes?: unknown[];
}

/** Declared types a path or query value may have now that no pipe converts them: they arrive as text. */
const UNCONVERTED_TYPES: unknown[] = [String, Object, undefined];

/**
 * The handler inputs that would reach a handler unchecked, as
 * `Controller.handler: reason`: a `@Body()` without the body pipe, or a path
 * or query value declared as anything but text (a number, say), which the
 * global pipe used to convert and nothing converts now.
 */
export function unvalidatedInputsOf(controllers: readonly ControllerClass[]): string[] {
  const found: string[] = [];
  for (const controller of controllers) {
    const prototype = controller.prototype as object;
    for (const handler of Object.getOwnPropertyNames(prototype)) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) ?? {}) as Record<
        string,
        RouteArgument
      >;
      const types = (Reflect.getMetadata('design:paramtypes', prototype, handler) ?? []) as unknown[];
      for (const [key, argument] of Object.entries(args)) {
        const kind = key.split(':')[0];
        const where = `${controller.name}.${handler}`;
        if (
          kind === String(RouteParamtypes.BODY) &&
          !(argument.pipes ?? []).some((pipe) => pipe instanceof BodyValidationPipe)
        ) {
          found.push(`${where}: @Body() without @ValidatedBody()`);
        }
        const type = types[argument.index];
        if (
          (kind === String(RouteParamtypes.PARAM) || kind === String(RouteParamtypes.QUERY)) &&
          !UNCONVERTED_TYPES.includes(type)
        ) {
          found.push(
            `${where}: a path or query value declared as ${String((type as { name?: string })?.name)}, not text`,
          );
        }
      }
    }
  }
  return found;
}
