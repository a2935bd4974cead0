/**
 * Keeps test runs quiet unless asked (the platform logs at `warn` during tests); lets every platform a test
 * starts, in this process or a child, take any free port for its mailhook SMTP listener (suites run side by
 * side); and leaves semantic search off unless a suite turns it on (`SEMANTIC_SEARCH=true`): the suites that
 * test it do, and the others would each embed every record they write with a 230 MB model thread.
 */
module.exports = async () => {
  if (!process.env.LOG_LEVEL) process.env.LOG_LEVEL = 'silent';
  if (!process.env.SMTP_PORT) process.env.SMTP_PORT = '0';
  if (!process.env.SEMANTIC_SEARCH) process.env.SEMANTIC_SEARCH = 'false';
};
