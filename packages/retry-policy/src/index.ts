export { jitteredMs, retryDelayMs, type TRetryPolicy } from "./retry-delay";
