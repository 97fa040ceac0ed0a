import type { Type } from '@nestjs/common';
import { getSchemaPath } from '@nestjs/swagger';

type Json = { [key: string]: unknown };

/** What an operation answers on success, public or internal. */
export type SuccessBody =
  /** `{data: <model>}` */
  | { data: Type }
  /** `{data: [<model>, ...]}` */
  | { dataList: Type }
  /** `{data: <schema>}` for shapes without a class */
  | { dataSchema: Json }
  /** The page envelope class made by `pageSchemaOf` */
  | { page: Type }
  /** A body sent as is (GET /v1) */
  | { model: Type };

/** The success body's schema, and the classes it names (to register with `ApiExtraModels`). */
export function successSchema(body: SuccessBody): { schema: Json; models: Type[] } {
  if ('data' in body) {
    return {
      schema: { type: 'object', required: ['data'], properties: { data: { $ref: getSchemaPath(body.data) } } },
      models: [body.data],
    };
  }
  if ('dataList' in body) {
    return {
      schema: {
        type: 'object',
        required: ['data'],
        properties: { data: { type: 'array', items: { $ref: getSchemaPath(body.dataList) } } },
      },
      models: [body.dataList],
    };
  }
  if ('dataSchema' in body) {
    return { schema: { type: 'object', required: ['data'], properties: { data: body.dataSchema } }, models: [] };
  }
  const model = 'page' in body ? body.page : body.model;
  return { schema: { $ref: getSchemaPath(model) }, models: [model] };
}
