import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { acceptAsInternalBody, isInternalRouteBody } from '../http/json-body';
import { DomainError } from '../errors/domain-error';

/** Rules about a value's kind: said before any rule about its content (a length, a range). */
const TYPE_RULES = ['isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject'];

/**
 * One message per field, the one that helps first: a missing (or empty)
 * field is said to be required, not also too long and of the wrong type;
 * else its kind; else the first rule it broke.
 */
function messageOf(path: string, property: string, constraints: Record<string, string>): string | null {
  if ('isDefined' in constraints || 'isNotEmpty' in constraints) return `${path} is required and must not be empty`;
  const rule = TYPE_RULES.find((name) => name in constraints) ?? Object.keys(constraints)[0];
  const message = rule === undefined ? undefined : constraints[rule];
  if (message === undefined) return null;
  return message.startsWith(property) ? `${path}${message.slice(property.length)}` : `${path}: ${message}`;
}

function messagesOf(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent === '' ? error.property : `${parent}.${error.property}`;
    const own = messageOf(path, error.property, error.constraints ?? {});
    return [...(own === null ? [] : [own]), ...messagesOf(error.children ?? [], path)];
  });
}

/**
 * The one body pipe, bound to each body by `@ValidatedBody()`: unknown keys are stripped silently (whitelist), known
 * ones validated and converted; failures become `400 invalid_argument`
 * naming the fields.
 *
 * class-transformer's cost grows faster than the body, so it only ever sees
 * bodies parsed for an internal route (admin token holders). A class DTO on
 * any other body fails closed: the request is refused (500) rather than
 * transformed, and the controller spec keeps public routes to plain objects.
 */
export class BodyValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && this.toValidate(metadata) && value !== undefined && !isInternalRouteBody(value)) {
      throw new Error(
        `${metadata.metatype?.name ?? 'A class'} body outside an internal route: public bodies are validated as plain objects`,
      );
    }
    return super.transform(value, metadata);
  }
}

export function createValidationPipe(): ValidationPipe {
  return new BodyValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: false,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => DomainError.invalidArgument(`${messagesOf(errors).slice(0, 5).join('; ')}.`),
  });
}

/**
 * A body an operator gives outside HTTP (the ops CLI), validated and
 * converted exactly as the internal route that takes it would: refused with
 * the same `400 invalid_argument` messages.
 */
export async function validatedInternalBody<T extends object>(body: object, dto: new () => T): Promise<T> {
  return (await createValidationPipe().transform(acceptAsInternalBody(body), { type: 'body', metatype: dto })) as T;
}
