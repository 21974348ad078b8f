// The signal functions without I/O, for the browser (`@sluice/services/signals/pure`): the console's
// client components import these values from here, never from the package root, which pulls in
// Prisma and pg.
export {
  FLEET_STATUSES,
  STATUS_ORDER,
  fleetStatus,
  isBacklogRising,
  firstLine,
  type TFleetStatus,
} from "./fleet-status";
export { RANGE_PRESETS, MAX_POINTS, GRAIN_SECONDS, type TRangePreset } from "./time-range";
export { fleetHeadline, rowProblems, type THeadline, type THeadlineRow } from "./fleet-headline";
