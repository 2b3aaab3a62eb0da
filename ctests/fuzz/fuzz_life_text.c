/*
 * fuzz_life_text.c: texts for gpuprims_life_set_rule and gpuprims_life_load_rle.
 *
 * Rules come in the forms the header documents ("B3/S23", lower case, without the slash,
 * Golly's "23/3"), spoiled so that they are certainly not a rule (a digit 9, another
 * letter, nothing at all, a part missing, a byte that is not UTF-8), or mutated at random
 * (then either outcome is fine, and the fuzzer asks the grid what it took).
 *
 * RLE texts are written from a pattern the fuzzer knows (comments, a header with or
 * without a rule and a Golly topology suffix, runs with counts, runs of empty rows,
 * lines broken between tokens), then spoiled the same three ways.
 */
#include "fuzz.h"

typedef struct {
  char *s;
  size_t n, cap;
} sb_t;

static void sb_put(sb_t *b, const char *fmt, ...) TU_PRINTF(2, 3);
static void sb_put(sb_t *b, const char *fmt, ...) {
  va_list ap;
  int w;
  for (;;) {
    va_start(ap, fmt);
    w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (w >= 0 && (size_t)w < b->cap - b->n) break;
    b->cap = b->cap * 2 + (size_t)(w > 0 ? w : 64);
    b->s = (char *)realloc(b->s, b->cap);
    if (!b->s) fz_fail("out of host memory");
  }
  b->n += (size_t)w;
}

static sb_t sb_new(void) {
  sb_t b;
  b.cap = 256;
  b.n = 0;
  b.s = (char *)tu_xmalloc(b.cap);
  b.s[0] = '\0';
  return b;
}

/* ------------------------------------------------------------------------------------- */
/* Rules                                                                                  */
/* ------------------------------------------------------------------------------------- */

static void digits(uint16_t mask, char *out) {
  int d, n = 0;
  for (d = 0; d <= 8; d++)
    if (mask >> d & 1) out[n++] = (char)('0' + d);
  out[n] = '\0';
}

void fz_rule_canon(uint16_t birth, uint16_t survive, char *out, size_t len) {
  char b[10], s[10];
  digits(birth, b);
  digits(survive, s);
  snprintf(out, len, "B%s/S%s", b, s);
}

int fz_rule_parse_canon(const char *t, uint16_t *birth, uint16_t *survive) {
  uint16_t m[2] = {0, 0};
  int part;
  for (part = 0; part < 2; part++) {
    if (*t++ != (part ? 'S' : 'B')) return 0;
    while (*t >= '0' && *t <= '8') m[part] |= (uint16_t)(1u << (*t++ - '0'));
    if (part == 0 && *t++ != '/') return 0;
  }
  if (*t) return 0;
  *birth = m[0];
  *survive = m[1];
  return 1;
}

/* A rule in one of the documented forms (0 B/S, 1 lower case, 2 no slash, 3 Golly S/B). */
static void rule_form(uint16_t b, uint16_t s, int form, char *out, size_t len) {
  char bd[10], sd[10];
  digits(b, bd);
  digits(s, sd);
  if (form == 3 && s == 0) form = 0; /* Golly's form with no survival digits: not a documented case */
  switch (form) {
    case 0: snprintf(out, len, "B%s/S%s", bd, sd); break;
    case 1: snprintf(out, len, "b%s/s%s", bd, sd); break;
    case 2: snprintf(out, len, "B%sS%s", bd, sd); break;
    default: snprintf(out, len, "%s/%s", sd, bd); break;
  }
}

static uint16_t rand_mask(void) {
  static const uint16_t common[] = {1u << 3, (1u << 3) | (1u << 6), 1u << 2, 0, 0x1FF, 1u << 0, (1u << 3) | (1u << 6) | (1u << 8)};
  return fz_pct(40) ? common[fz_below(TU_ARRAY_LEN(common))] : (uint16_t)fz_below(512);
}

static void mutate(char *t, size_t cap, const char *alphabet) {
  int edits = 1 + (int)fz_below(3), i;
  for (i = 0; i < edits; i++) {
    size_t n = strlen(t), at = (size_t)fz_below(n + 1);
    char c = alphabet[fz_below(strlen(alphabet))];
    unsigned how = (unsigned)fz_below(3);
    if (how == 0 && n + 2 < cap) { /* insert */
      memmove(t + at + 1, t + at, n - at + 1);
      t[at] = c;
    } else if (how == 1 && at < n) { /* delete */
      memmove(t + at, t + at + 1, n - at);
    } else if (at < n) {
      t[at] = c;
    }
  }
}

void fz_rule_text(char *out, size_t len, uint16_t *birth, uint16_t *survive, int *kind) {
  int form = (int)fz_below(4);
  unsigned r = (unsigned)fz_below(100);
  char valid[64];
  *birth = rand_mask();
  *survive = rand_mask();
  rule_form(*birth, *survive, form, valid, sizeof valid);
  if (r < 60) {
    *kind = 0;
    snprintf(out, len, "%s", valid);
    return;
  }
  if (r < 85) {
    *kind = 1;
    switch (fz_below(7)) {
      case 0: snprintf(out, len, form == 3 ? "9%s" : "B9%s", form == 3 ? valid : valid + 1); break;
      case 1: snprintf(out, len, "%s/B3", valid); break;
      case 2: snprintf(out, len, "%s", fz_pct(50) ? "" : "  \t "); break;
      case 3: snprintf(out, len, form == 3 ? "23" : "B36"); break;
      case 4: snprintf(out, len, "%sx", valid); break;
      case 5: snprintf(out, len, "\xff%s", valid); break;
      default: snprintf(out, len, "Q3/S23"); break;
    }
    return;
  }
  *kind = 2;
  snprintf(out, len, "%s", valid);
  mutate(out, len, "BbSs0123456789/ \t:x\xc3\xff");
}

/* ------------------------------------------------------------------------------------- */
/* RLE                                                                                    */
/* ------------------------------------------------------------------------------------- */

/* Appends a token, breaking the line now and then (and always before 70 characters). */
static void token(sb_t *b, size_t *line, uint64_t count, char tag) {
  char t[32];
  int n = count > 1 || (count == 1 && fz_pct(3)) ? snprintf(t, sizeof t, "%llu%c", (unsigned long long)count, tag)
                                                : snprintf(t, sizeof t, "%c", tag);
  if (*line + (size_t)n > 70 || fz_pct(4)) {
    sb_put(b, "\n");
    *line = 0;
  }
  if (n > 1 && fz_pct(3)) { /* the count and its tag on two lines */
    sb_put(b, "%.*s\n%c", n - 1, t, tag);
    *line = 1;
    return;
  }
  sb_put(b, "%s", t);
  *line += (size_t)n;
}

char *fz_rle_text(uint64_t bw, uint64_t bh, const unsigned char *cells, uint64_t pw, uint64_t ph, int has_rule,
                  uint16_t birth, uint16_t survive) {
  sb_t b = sb_new();
  size_t line = 0;
  uint64_t r, x, dollars = 0;
  if (fz_pct(30)) sb_put(&b, "#N fuzz\n");
  if (fz_pct(30)) sb_put(&b, "#C a comment, with = and , and 3o$!\n");
  if (fz_pct(10)) sb_put(&b, "\n");
  if (fz_pct(80))
    sb_put(&b, "x = %llu, y = %llu", (unsigned long long)bw, (unsigned long long)bh);
  else
    sb_put(&b, "x=%llu,y=%llu", (unsigned long long)bw, (unsigned long long)bh);
  if (has_rule) {
    char rule[64];
    rule_form(birth, survive, (int)fz_below(4), rule, sizeof rule);
    sb_put(&b, ", rule = %s", rule);
    if (fz_pct(25)) sb_put(&b, ":T%llu,%llu", (unsigned long long)fz_range(1, 100), (unsigned long long)fz_range(1, 100));
  }
  sb_put(&b, "\n");
  for (r = 0; r < ph; r++) {
    uint64_t last_live = 0;
    int any = 0;
    for (x = 0; x < pw; x++)
      if (cells[r * pw + x]) last_live = x + 1, any = 1;
    if (any && dollars) {
      token(&b, &line, dollars, '$');
      dollars = 0;
    }
    for (x = 0; any && x < pw;) {
      uint64_t run = 1;
      unsigned char v = cells[r * pw + x];
      while (x + run < pw && cells[r * pw + x + run] == v) run++;
      if (!v && x + run >= pw) { /* trailing dead cells: left out, or written now and then */
        if (fz_pct(30)) token(&b, &line, run, 'b');
        break;
      }
      token(&b, &line, run, v ? 'o' : 'b');
      x += run;
    }
    (void)last_live;
    dollars++;
  }
  if (fz_pct(20) && dollars > 1) token(&b, &line, dollars - 1, '$'); /* trailing empty rows, written */
  sb_put(&b, "!%s", fz_pct(50) ? "\n" : fz_pct(20) ? "\nwhatever follows the '!' is not read: x = 1, y = 1\n3o!\n" : "");
  return b.s;
}

/* Where the header line starts and ends (its '\n', or the end). */
static void header_span(const char *t, size_t *start, size_t *end) {
  size_t i = 0;
  for (;;) {
    while (t[i] == '\n' || t[i] == ' ') i++;
    if (t[i] != '#') break;
    while (t[i] && t[i] != '\n') i++;
  }
  *start = i;
  while (t[i] && t[i] != '\n') i++;
  *end = i;
}

/* text[0..at) + ins + text[skip..] */
static char *splice(const char *t, size_t at, size_t skip, const char *ins) {
  size_t n = strlen(t), m = strlen(ins);
  char *o = (char *)tu_xmalloc(n + m + 1);
  memcpy(o, t, at);
  memcpy(o + at, ins, m);
  memcpy(o + at + m, t + skip, n - skip + 1);
  return o;
}

char *fz_rle_spoil(const char *text, uint64_t bw, uint64_t bh, int has_runs, int *certain, char *how, size_t how_len) {
  size_t hs, he, body;
  char hdr[128];
  header_span(text, &hs, &he);
  body = text[he] ? he + 1 : he;
  *certain = fz_pct(70);
  if (*certain) {
    switch (fz_below(has_runs ? 9 : 8)) {
      case 0: { /* the pattern's '!' and whatever follows it */
        const char *bang = strchr(text + body, '!');
        snprintf(how, how_len, "no '!' at the end");
        return splice(text, (size_t)(bang - text), strlen(text), "");
      }
      case 1: snprintf(how, how_len, "a run count of 0"); return splice(text, body, body, "0o");
      case 2: snprintf(how, how_len, "a 'q' in the pattern"); return splice(text, body, body, "q");
      case 3:
        snprintf(how, how_len, "a number past 2^64 in the header");
        return splice(text, hs, he, "x = 99999999999999999999999, y = 1");
      case 4: snprintf(how, how_len, "no header line"); return splice(text, hs, body, "");
      case 5:
        snprintf(how, how_len, "a bad rule in the header");
        snprintf(hdr, sizeof hdr, "x = %llu, y = %llu, rule = B9/S23", (unsigned long long)bw, (unsigned long long)bh);
        return splice(text, hs, he, hdr);
      case 6: snprintf(how, how_len, "a comment line inside the pattern"); return splice(text, body, body, "\n#C inside\n");
      case 7:
        snprintf(how, how_len, "no comma in the header");
        snprintf(hdr, sizeof hdr, "x = %llu y = %llu", (unsigned long long)bw, (unsigned long long)bh);
        return splice(text, hs, he, hdr);
      default:
        snprintf(how, how_len, "runs outside a 0 x 0 header box");
        return splice(text, hs, he, "x = 0, y = 0");
    }
  }
  {
    size_t n = strlen(text) + 8;
    char *o = (char *)tu_xmalloc(n);
    memcpy(o, text, strlen(text) + 1);
    mutate(o, n, "bo$!0123456789xy=,#:rule \n\t\xc3\xff");
    snprintf(how, how_len, "mutated at random");
    return o;
  }
}
