export const SESSION_COOKIE = "troupe_session";
