/**
 * Memory text is data, never instructions. Lines that look like they address the model (role
 * prefixes, chat-template tokens, "ignore previous instructions", tags that would close the memory
 * block) are neutralised before memory text goes into any prompt.
 */
const INSTRUCTION_LIKE: RegExp[] = [
  /^\s*(system|assistant|user|developer|human|ai|tool)\s*:/i,
  /\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|any)\b.{0,40}\b(instructions?|prompts?|rules?|messages?|context)\b/i,
  /\b(you are now|new instructions?|act as|from now on you)\b/i,
  /<\/?\s*(memory|system|assistant|user|instructions?|prompt|tool)[^>]*>/i,
  /<\|[^|]*\|>/, // chat-template tokens such as <|im_start|>
  /\[\/?(INST|SYS)\]|<<\/?SYS>>/i,
];

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
  const lines = text.split(/\r?\n/).map((line) => {
    if (!isInstructionLike(line)) return line.replace(/<\/?\s*memory[^>]*>/gi, (m) => m.replace(/</g, '‹').replace(/>/g, '›'));
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
