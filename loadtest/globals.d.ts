// k6 provides `console` in every context; @types/k6 does not declare it (it is not Node's).
// eslint-disable-next-line no-var -- a global declaration must be `var`
declare var console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
};
