/**
 * How `toolgate`'s help reads: every command states its exit codes (an `EXIT CODES` section, from
 * the command's {@link ExitCodes} annotation), and a flag that must be given says so (`required:`
 * before its description). A formatter over effect/cli's default one, provided by the executable
 * (`CliOutput.layer(Help.formatter())`).
 *
 * @since 0.1.0
 */
import { CliOutput } from "effect/cli"
import type { HelpDoc } from "effect/cli"
import * as Context from "effect/Context"
import * as Option from "effect/Option"

/**
 * A command's exit codes and what each means, in the order they are listed.
 *
 * @since 0.1.0
 * @category annotations
 */
export const ExitCodes = Context.Reference<ReadonlyArray<readonly [code: number, meaning: string]>>(
  "@toolgate/cli/Help/ExitCodes",
  { defaultValue: () => [] }
)

/**
 * The help formatter: effect/cli's default one, with required flags marked and the exit codes
 * listed.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatter = (base: CliOutput.Formatter = CliOutput.defaultFormatter()): CliOutput.Formatter => ({
  ...base,
  formatHelpDoc: (doc: HelpDoc.HelpDoc): string => {
    const flags = doc.flags.map((flag) =>
      flag.required
        ? { ...flag, description: Option.some(`required: ${Option.getOrElse(flag.description, () => "")}`) }
        : flag
    )
    const text = base.formatHelpDoc({ ...doc, flags })
    const codes = Context.get(doc.annotations as Context.Context<never>, ExitCodes)
    if (codes.length === 0) return text
    return `${text}\n\nEXIT CODES\n${
      codes.map(([code, meaning]) => `  ${String(code).padEnd(4)}${meaning}`).join("\n")
    }`
  }
})
