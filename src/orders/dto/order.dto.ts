import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { pageSchemaOf } from '../../common/openapi/page-schema';
import { ORDER_STATUSES, type OrderStatus } from '../order-status';

/**
 * Money and counts are integers that must survive a JSON round trip exactly,
 * so they are capped at Number.MAX_SAFE_INTEGER (the bigint columns are too).
 */
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** An optional text field of at most `maxLength` characters (`null` allowed), validated and documented at once. */
const OptionalText = (maxLength: number): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: String, nullable: true, maxLength }),
    IsOptional(),
    IsString(),
    MaxLength(maxLength),
  );

@ApiSchema({ name: 'LineItemCreate' })
export class CreateLineItemDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_SAFE })
  @IsInt()
  @Min(0)
  @Max(MAX_SAFE)
  quantity!: number;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, maximum: MAX_SAFE })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_SAFE)
  unitAmountMinor?: number | null;
}

/** Body of internal `POST /internal/orders` (internal-api.md). */
@ApiSchema({ name: 'OrderCreate' })
export class CreateOrderDto {
  @ApiProperty({ minLength: 1, maxLength: 100 }) @IsString() @IsNotEmpty() @MaxLength(100) eventId!: string;

  @ApiPropertyOptional({
    enum: ORDER_STATUSES,
    nullable: true,
    description: 'Default `pending`. Created as `confirmed` counts as the transition and emits `order.confirmed`.',
  })
  @IsOptional()
  @IsIn(ORDER_STATUSES)
  status?: OrderStatus | null;

  @ApiPropertyOptional({ type: Boolean, nullable: true }) @IsOptional() @IsBoolean() isRsvp?: boolean | null;

  @ApiProperty({ type: () => [CreateLineItemDto], minItems: 1, maxItems: 1000 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => CreateLineItemDto)
  lineItems!: CreateLineItemDto[];

  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_SAFE, description: 'Minor currency units.' })
  @IsInt()
  @Min(0)
  @Max(MAX_SAFE)
  totalAmountMinor!: number;

  /** Stored as given, in any case; output uppercases it and reads null or empty as EUR. */
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: '^(?:[A-Za-z]{3})?$',
    description: 'ISO 4217, stored as given (any case, empty or null); the Order shows it uppercase, EUR for none.',
  })
  @IsOptional()
  @IsString()
  @Matches(/^(?:[A-Za-z]{3})?$/, { message: 'currency must be a three-letter ISO 4217 code (any case), empty or null' })
  currency?: string | null;

  @OptionalText(500) billingName?: string | null;
  @OptionalText(500) billingEmail?: string | null;
  @OptionalText(500) attributionSource?: string | null;
  @OptionalText(100) paymentProvider?: string | null;
}

/** Body of internal `PATCH /internal/orders/{orderId}`: a rewrite; `null` clears a field. */
@ApiSchema({
  name: 'OrderRewrite',
  description: 'A rewrite: `null` clears a field; `updatedAt` moves, nothing is emitted.',
})
export class UpdateOrderDto {
  @OptionalText(500) billingName?: string | null;
  @OptionalText(500) billingEmail?: string | null;
  @OptionalText(500) attributionSource?: string | null;
}

/** The Order of api-v1.md, field for field. */
@ApiSchema({ name: 'Order', description: 'A confirmed order (read-only).' })
export class OrderResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ type: String, nullable: true }) eventId!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Always `confirmed` in public responses.' })
  status!: string | null;
  @ApiProperty() isRsvp!: boolean;
  @ApiProperty({ type: 'integer', description: "Sum over the order's line items." }) quantity!: number;
  @ApiProperty({ type: 'integer', description: 'Minor currency units.' }) totalAmountMinor!: number;
  @ApiProperty({ description: 'Uppercase ISO 4217, never null, default EUR.', example: 'EUR' }) currency!: string;
  @ApiProperty({ type: String, nullable: true }) billingName!: string | null;
  @ApiProperty({ type: String, nullable: true }) billingEmail!: string | null;
  @ApiProperty({ type: String, nullable: true }) attributionSource!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) createdAt!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Compared by `updated_after`.' })
  updatedAt!: string | null;
}

/** The page envelope around Orders, for the OpenAPI document. */
export const OrderPage = pageSchemaOf(OrderResponseDto, 'OrderPage');

/** What the webhooks context needs for an `order.confirmed` delivery (api-v1.md Events). */
export interface OrderWebhookData {
  orderId: string;
  eventId: string | null;
  /**
   * Integer minor units, the same number as the Order's `totalAmountMinor`.
   * The contract leaves the unit open; minor units keep money integer end to
   * end, where a float in major units would not.
   */
  totalAmount: number;
  /** Uppercase; `EUR` when the stored value is null or empty, as on the Order. */
  currency: string | null;
  isRsvp: boolean;
  quantity: number;
  billingName: string | null;
  billingEmail: string | null;
  paymentProvider: string | null;
}
