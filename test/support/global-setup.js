/** Keeps test runs quiet unless asked: the platform logs at `warn` during tests. */
module.exports = async () => {
  if (!process.env.LOG_LEVEL) process.env.LOG_LEVEL = 'silent';
};
