// Every options object crudkit takes lists its keys once, as one string the compiler checks against
// the options type (`optionKeys`): a key left out or unknown does not compile, and at run time an
// unknown key is a startup error with a "did you mean".

import { expect, it } from "vitest";
import { checkOptionKeys, optionKeys } from "../src/core/option-keys.ts";

interface GreetOptions {
  name?: string;
  loud?: boolean;
}

it("the list of keys is checked against the type, both ways", () => {
  expect(optionKeys<GreetOptions>()("name loud")).toEqual(["name", "loud"]);
  // @ts-expect-error: "loud" is left out
  const missing = optionKeys<GreetOptions>()("name");
  // @ts-expect-error: "shout" is not a key of GreetOptions
  const unknown = optionKeys<GreetOptions>()("name loud shout");
  expect([missing, unknown]).toHaveLength(2);
});

it("an unknown key is refused with the nearest known one", () => {
  const keys = optionKeys<GreetOptions>()("name loud");
  expect(() => checkOptionKeys({ nmae: "x" }, keys, "greet()")).toThrow(
    /unknown option "nmae"; did you mean "name"\?/,
  );
  expect(() => checkOptionKeys({ name: "x", loud: true }, keys, "greet()")).not.toThrow();
});
