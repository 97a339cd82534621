/** The search requests' bounds are declared with their DTOs in the contracts. */
export { REQUEST_LIMITS, expressionSize } from '@kb/contracts';
