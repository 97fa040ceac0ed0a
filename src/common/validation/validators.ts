import { ValidateBy, type ValidationOptions } from 'class-validator';
import { isValidTimeZone } from '../../../libs/event-rules';
import { isLocaleMap } from '../../../libs/locale/localised-text';

/** A map of locale codes to strings (`{"EN": "..."}`), as event titles and venue descriptions are. */
export function IsLocaleMap(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isLocaleMap',
      validator: {
        validate: (value: unknown) => isLocaleMap(value),
        defaultMessage: (args) => `${args?.property ?? 'value'} must be an object mapping locale codes to strings`,
      },
    },
    options,
  );
}

/** An IANA time zone name such as `Europe/Berlin`. */
export function IsIanaTimeZone(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIanaTimeZone',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isValidTimeZone(value),
        defaultMessage: (args) => `${args?.property ?? 'value'} must be an IANA time zone such as Europe/Berlin`,
      },
    },
    options,
  );
}
