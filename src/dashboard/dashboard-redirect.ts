/**
 * Thrown to answer with `303 See Other`: after a form post (so a reload does
 * not post again) and when a page needs a session it does not have. The
 * dashboard's exception filter turns it into the redirect.
 */
export class DashboardRedirect extends Error {
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
    this.name = 'DashboardRedirect';
  }
}
