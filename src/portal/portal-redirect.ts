/**
 * Thrown to answer with `303 See Other` after every form post, so that a
 * reload shows the page again and never repeats the action. The portal's
 * exception filter turns it into the redirect.
 */
export class PortalRedirect extends Error {
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
    this.name = 'PortalRedirect';
  }
}
