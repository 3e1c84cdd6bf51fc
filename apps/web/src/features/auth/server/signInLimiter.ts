import { serverEnv } from "../../../env";
import { getRedis } from "../../../server/redis";
import { SignInLimiter } from "./signInLimits";

let limiter: SignInLimiter | undefined;

/** The process's sign-in limiter on the shared Redis connection, with the operator's settings. */
export function signInLimiter(): SignInLimiter {
  const env = serverEnv();
  limiter ??= new SignInLimiter(getRedis(), {
    perAccount: env.TROUPE_SIGNIN_ACCOUNT_LIMIT,
    perAddress: env.TROUPE_SIGNIN_ADDRESS_LIMIT,
    windowSeconds: env.TROUPE_SIGNIN_WINDOW_S,
  });
  return limiter;
}
