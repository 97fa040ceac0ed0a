import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** `{id, deleted: true}`: what every internal delete answers. */
@ApiSchema({ name: 'Deleted', description: 'The id of what was deleted.' })
export class DeletedDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: [true] }) deleted!: true;
}
