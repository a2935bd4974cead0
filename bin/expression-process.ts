import { serveExpressions } from '../infra/expressions/process-main';

/** A process of the expression pool (see `ExpressionPool`): evaluates user-written expressions apart. */
serveExpressions();
