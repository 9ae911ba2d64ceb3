/**
 * The package plans (spec 2.2) and their message allowances (docs/internals.md, Quota).
 */
export interface PackagePlan {
  readonly id: number;
  readonly code: string;
  readonly name: string;
  /** Messages a device on this plan may send; -1 means unlimited. */
  readonly messages: number;
}

export const PACKAGES: readonly PackagePlan[] = [
  { id: 1, code: 'BETA', name: 'Beta Tester', messages: 250 },
  { id: 2, code: 'STARTER60K', name: 'Starter', messages: 10_000 },
  { id: 3, code: 'STARTUP240K', name: 'Startup', messages: -1 },
  { id: 4, code: 'BUSINESS', name: 'Business', messages: 500_000 },
];

export const PACKAGE_CODES = PACKAGES.map((plan) => plan.code);

export function findPackage(code: string): PackagePlan | undefined {
  return PACKAGES.find((plan) => plan.code === code);
}

/** `quote_available` as the spec shows it: a string holding an integer, "-1" when unlimited. */
export function quoteAvailable(limit: number, used: number): string {
  return limit < 0 ? '-1' : String(Math.max(0, limit - used));
}
