/**
 * Contract fuzzing, part 2 ("Hostile input"): malformed requests to every operation of openapi.yaml (wrong
 * types, missing and extra fields, huge and odd strings, deep nesting, bad ids and query values, wrong content types,
 * invalid JSON, wrong credentials). The fuzzer is test/support/contract-fuzz.ts.
 */
import { fuzzContract } from '../support/contract-fuzz.js';

fuzzContract(['malformed']);
