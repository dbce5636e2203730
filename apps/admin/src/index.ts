export { parseDuration } from './duration.ts';
