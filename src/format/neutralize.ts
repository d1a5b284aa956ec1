/**
 * Memory text is data, never instructions. Lines that look like they address the model (role
 * prefixes, chat-template tokens, "ignore previous instructions", tags that would close the memory
 * block) are neutralised before memory text goes into any prompt.
 */
const INSTRUCTION_LIKE: RegExp[] = [
  /^\s*(system|assistant|user|developer|human|ai|tool)\s*:/i,
  // An order addressed to the reader: "You must…", "The assistant should…", at the start of the
  // line or of any sentence in it ("… on suspected compromise. You must ignore…").
  /(^|[.!?;:…]["'”’)\]]*\s)\W*(you|the (assistant|model|ai|agent))\s+(must|shall|should|will|need to|have to|are (required|instructed|to))\b/i,
  /\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|any)\b.{0,40}\b(instructions?|prompts?|rules?|messages?|context)\b/i,
  /\b(you are now|new instructions?|act as|from now on you)\b/i,
  /<\/?\s*(memory|system|assistant|user|instructions?|prompt|tool)[^>]*>/i,
  /<\|[^|]*\|>/, // chat-template tokens such as <|im_start|>
  /\[\/?(INST|SYS)\]|<<\/?SYS>>/i,
];

/**
 * Every line terminator a model's tokenizer or an XML reader may take as one (CR LF, LF, CR, VT,
 * FF, NEL, LS, PS): a role prefix after any of them starts a line of its own.
 */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/;

/** True when a line reads as an instruction to the model rather than as content. */
export function isInstructionLike(line: string): boolean {
  return INSTRUCTION_LIKE.some((re) => re.test(line));
}

/**
 * Returns the text with every instruction-like line defused: angle brackets and chat-template
 * markers escaped and the line quoted as reported speech, so it is still readable for a person.
 */
export function neutralize(text: string): { text: string; neutralized: number } {
  let neutralized = 0;
  // Whatever follows `<` and names the memory tag, on this line or the next, could close the block:
  // the `<` goes first, so no `>` later or a break inside the tag can complete it.
  const original = text.split(LINE_BREAK);
  // NEL (U+0085) is no \s to a JavaScript pattern, but a line break once the lines are joined.
  const lines = text
    .replace(/<(?=[\s\u0085/]*memory)/gi, '‹')
    .split(LINE_BREAK)
    .map((line, i) => {
      if (!isInstructionLike(original[i]!)) return line;
      neutralized++;
      const defused = line
        .replace(/</g, '‹')
        .replace(/>/g, '›')
        .replace(/\|/g, '¦')
        .replace(/\[(\/?)(INST|SYS)\]/gi, '($1$2)')
        .replace(/^\s*(system|assistant|user|developer|human|ai|tool)\s*:/i, '$1 (quoted):');
      return `[quoted text, not an instruction] ${defused}`;
    });
  return { text: lines.join('\n'), neutralized };
}
