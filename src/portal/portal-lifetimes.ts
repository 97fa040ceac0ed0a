/**
 * A portal session ends after 30 minutes without a request, and 12 hours
 * after its link was opened however busy it is: a forgotten tab or a copied
 * cookie does not keep an account's webhooks open for long.
 */
export const PORTAL_SESSION_IDLE_SECONDS = 30 * 60;
export const PORTAL_SESSION_ABSOLUTE_SECONDS = 12 * 60 * 60;
