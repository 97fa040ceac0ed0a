/**
 * A request that matched no route its listener serves: a path nobody
 * registered, or a route that belongs to the other listener. The exception
 * filter turns it into `404 not_found`, or `405 method_not_allowed` with
 * `Allow` when the path exists on this listener with other methods.
 *
 * Its own class, so a handler that throws Nest's `NotFoundException` for a
 * missing resource is never mistaken for a route miss.
 */
export class RouteMiss extends Error {
  constructor() {
    super('route miss');
    this.name = 'RouteMiss';
  }
}
