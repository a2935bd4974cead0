/**
 * Every test holds the platform's JSON answers to their operation contracts (infra/http/answer-contract.ts):
 * an answer out of its contract becomes a 500, and the reason is printed, so the API description cannot
 * drift from what the platform really answers.
 */
import { OPERATIONS } from '../../contracts/api/index';
import { answerContractCheck } from '../../infra/http/answer-contract';
import { checkAnswersWith } from '../../infra/http/respond';

const check = answerContractCheck(OPERATIONS);
checkAnswersWith((res, status, body) => {
  try {
    check(res, status, body);
  } catch (error) {
    process.stderr.write(`\n${(error as Error).message}\n`);
    throw error;
  }
});
