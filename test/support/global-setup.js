/**
 * Keeps test runs quiet unless asked (the platform logs at `warn` during tests), and lets every platform a test
 * starts, in this process or a child, take any free port for its mailhook SMTP listener (suites run side by side).
 */
module.exports = async () => {
  if (!process.env.LOG_LEVEL) process.env.LOG_LEVEL = 'silent';
  if (!process.env.SMTP_PORT) process.env.SMTP_PORT = '0';
};
