import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { isInternalRouteBody } from '../http/json-body';
import { DomainError } from '../errors/domain-error';

function messagesOf(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent === '' ? error.property : `${parent}.${error.property}`;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(error.property) ? `${path}${message.slice(error.property.length)}` : `${path}: ${message}`,
    );
    return [...own, ...messagesOf(error.children ?? [], path)];
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
