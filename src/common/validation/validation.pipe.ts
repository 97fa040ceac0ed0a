import { ValidationPipe, type ValidationError } from '@nestjs/common';
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
 * The one body pipe: unknown keys are stripped silently (whitelist), known
 * ones validated and converted; failures become `400 invalid_argument`
 * naming the fields.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: false,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => DomainError.invalidArgument(`${messagesOf(errors).slice(0, 5).join('; ')}.`),
  });
}
