/**
 * Contract fuzzing, part 1 ("Hostile input"): spec-shaped requests from the schemas of openapi.yaml and the
 * example request with one string at a time made hostile. The fuzzer is test/support/contract-fuzz.ts.
 */
import { fuzzContract } from '../support/contract-fuzz.js';

fuzzContract(['spec-shaped', 'leaf-sweep']);
