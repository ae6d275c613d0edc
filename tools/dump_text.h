/*
 * dump_text.h - values as text for `passion dump` (dump_text.c, prefix
 * cli_): numbers the shortest way that reads back bit for bit, text
 * quoted, all through one output buffer.
 */
#ifndef PASSION_CLI_DUMP_TEXT_H
#define PASSION_CLI_DUMP_TEXT_H

#include <stdint.h>
#include <stdio.h>

/* The most one cli_out_* call adds (a value, or a piece of a text). */
#define CLI_OUT_ITEM 512

/* Text for a stream, written in pieces of up to cap bytes. */
typedef struct cli_out {
    FILE *f;
    char *buf;
    size_t len, cap;
    int err; /* a write failed */
} cli_out;

/* 0, or -1 when there is no memory for the buffer. */
int cli_out_init(cli_out *o, FILE *f, size_t cap);
/* Write what is buffered and flush the stream; 0, or -1 if any write of
   this buffer failed. */
int cli_out_flush(cli_out *o);
void cli_out_free(cli_out *o);
void cli_out_printf(cli_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* One element of numpy kind letter `kind` (b i u f c; anything else as
   0x and its bytes) and es bytes, in memory (native) order. */
void cli_out_value(cli_out *o, const unsigned char *p, char kind,
                   int64_t es);
/* len bytes of text, quoted (trailing NULs dropped, escapes as ncdump). */
void cli_out_text(cli_out *o, const unsigned char *p, int64_t len);
/* The same value as cli_out_value into out (n bytes); its length. */
int cli_value_text(char *out, size_t n, const unsigned char *p, char kind,
                   int64_t es);

#endif
