/**
 * The direction of imports between the top-level folders (docs/design.md, "Layout"): each folder has one job,
 * and an import may only point the way that job allows. `npm run lint` runs it (`depcruise --config
 * .dependency-cruiser.js .`); test/unit/dependency-rules.test.ts shows each rule reporting a bad import.
 */
const APPLICATION = '^(command-api|query-api|projections|integrator)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'contracts-are-self-contained',
      comment: 'contracts/ is the language every part speaks: it imports nothing of ours but contracts/.',
      severity: 'error',
      from: { path: '^contracts/' },
      to: { path: '^(command-api|query-api|projections|integrator|infra|bin|test|bench)/' },
    },
    {
      name: 'languages-are-pure',
      comment:
        'languages/ holds the filter language, the mapping language and data structures: pure code that ' +
        'imports nothing of ours but languages/ and contracts/.',
      severity: 'error',
      from: { path: '^languages/' },
      to: { path: '^(command-api|query-api|projections|integrator|infra|bin|test|bench)/' },
    },
    {
      name: 'infra-does-not-import-applications',
      comment: 'infra/ holds ports and adapters: an adapter never imports an application folder.',
      severity: 'error',
      from: { path: '^infra/' },
      to: { path: APPLICATION },
    },
    {
      name: 'domain-does-not-import-infra',
      comment:
        "Deciders are pure: a feature's domain/ (command-api/<feature>/domain/) never imports infra/ (I/O comes " +
        'in through ports).',
      severity: 'error',
      from: { path: '^command-api/[^/]+/domain/' },
      to: { path: '^infra/' },
    },
    {
      name: 'projections-are-pure',
      comment:
        'Read-model projections are pure functions of events: they never import infra/, not even a type (the ' +
        'documents and changes they make are shapes of contracts/).',
      severity: 'error',
      from: { path: '^projections/read-models/' },
      to: { path: '^infra/' },
    },
    {
      name: 'apis-apart',
      comment:
        'The command API and the query API never import each other; shared shapes go through contracts/.',
      severity: 'error',
      from: { path: '^(command-api|query-api)/' },
      to: { path: '^(command-api|query-api)/', pathNot: '^$1/' },
    },
    {
      name: 'routes-stay-in-their-app',
      comment:
        "An app's route files are HTTP only: nothing outside the app imports them. What others need (a command, " +
        "a search, a projection name, a router to serve) has a home outside routes/: a feature's commands.ts or " +
        'service.ts, query-api/app.ts, projections/.',
      severity: 'error',
      from: { pathNot: '^(query-api/|command-api/[^/]+/)' },
      to: { path: '^(query-api/routes/|command-api/[^/]+/routes/)' },
    },
    {
      name: 'feature-routes-stay-in-their-feature',
      comment:
        "A command-api feature's routes are its own: only its service.ts and its other routes import them; " +
        'another feature calls its commands.',
      severity: 'error',
      from: { path: '^command-api/([^/]+)/' },
      to: { path: '^command-api/[^/]+/routes/', pathNot: '^command-api/$1/' },
    },
    {
      name: 'kit-below-features',
      comment:
        'command-api/kit/ is the kernel every feature stands on (handler, ids, idempotency, route context): it ' +
        'imports nothing of the command API above it, neither a feature nor the app and its dependencies.',
      severity: 'error',
      from: { path: '^command-api/kit/' },
      to: { path: '^command-api/', pathNot: '^command-api/kit/' },
    },
    {
      name: 'deciders-know-no-application',
      comment:
        "A feature's deciders (domain/) are the bottom of its room: they import other deciders, never a " +
        "feature's commands, routes or service.",
      severity: 'error',
      from: { path: '^command-api/[^/]+/domain/' },
      to: { path: '^command-api/[^/]+/(commands|service)\\.ts$|^command-api/[^/]+/routes/' },
    },
    {
      name: 'projections-do-not-import-apis',
      comment: 'Projections subscribe to the event store; they know neither API.',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: '^(command-api|query-api)/' },
    },
    {
      name: 'nothing-imports-the-integrator',
      comment:
        'The integrator acts through the command side and reads through the query side; neither API nor the ' +
        'projections import it (only bin/ wires it in).',
      severity: 'error',
      from: { path: '^(command-api|query-api|projections|infra|contracts|languages)/' },
      to: { path: '^integrator/' },
    },
    {
      name: 'only-composition-roots-import-bin',
      comment: 'bin/ wires everything together; nothing but bin/, tests and benchmarks imports it.',
      severity: 'error',
      from: { path: '^(contracts|languages|command-api|query-api|projections|integrator|infra)/' },
      to: { path: '^(bin|test|bench)/' },
    },
  ],
  options: {
    // Tests and benchmarks may import anything; the rules are about the application's own folders.
    includeOnly: '^(contracts|languages|command-api|query-api|projections|integrator|infra|bin)/',
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are arrows too (a domain file naming an adapter's type knows the adapter).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
