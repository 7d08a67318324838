/* SPDX-License-Identifier: MIT */
/*
 * interp.c - a small bytecode interpreter, the AArch64 workload of
 * bench/gentest.sh whose time goes to indirect branches as an
 * interpreter's does: a switch over 20 opcodes (a jump table, `br`) and
 * built-in functions called through a table of pointers (`blr`).  Three
 * programs, REPEAT times (the first argument, default 1): a hash over a
 * counted loop, Collatz steps over a range, and a sum of built-ins'
 * results.  Prints one checksum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum op {
	PUSH,
	LOAD,
	STORE,
	ADD,
	SUB,
	MUL,
	AND,
	XOR,
	SHR,
	SHL,
	LT,
	EQ,
	JMP,
	JZ,
	JNZ,
	DUP,
	POP,
	CALL,
	HALT,
	INC
};

typedef uint32_t (*builtin)(uint32_t);

static uint32_t b_rot(uint32_t x)
{
	return x << 7 | x >> 25;
}
static uint32_t b_mix(uint32_t x)
{
	return (x ^ x >> 15) * 0x2c1b3c6du;
}
static uint32_t b_pop(uint32_t x)
{
	return (uint32_t)__builtin_popcount(x);
}
static uint32_t b_neg(uint32_t x)
{
	return ~x + 1;
}

static builtin const builtins[4] = {b_rot, b_mix, b_pop, b_neg};

/* Run @code with variables @var; returns the top of the stack at HALT. */
static uint32_t run(const int32_t *code, uint32_t *var)
{
	uint32_t st[64], *sp = st;
	const int32_t *pc = code;

	for (;;) {
		int32_t a = pc[1];

		switch ((enum op) * pc) {
		case PUSH:
			*sp++ = (uint32_t)a;
			pc += 2;
			break;
		case LOAD:
			*sp++ = var[a];
			pc += 2;
			break;
		case STORE:
			var[a] = *--sp;
			pc += 2;
			break;
		case ADD:
			sp--;
			sp[-1] += sp[0];
			pc++;
			break;
		case SUB:
			sp--;
			sp[-1] -= sp[0];
			pc++;
			break;
		case MUL:
			sp--;
			sp[-1] *= sp[0];
			pc++;
			break;
		case AND:
			sp--;
			sp[-1] &= sp[0];
			pc++;
			break;
		case XOR:
			sp--;
			sp[-1] ^= sp[0];
			pc++;
			break;
		case SHR:
			sp--;
			sp[-1] >>= sp[0] & 31;
			pc++;
			break;
		case SHL:
			sp--;
			sp[-1] <<= sp[0] & 31;
			pc++;
			break;
		case LT:
			sp--;
			sp[-1] = sp[-1] < sp[0];
			pc++;
			break;
		case EQ:
			sp--;
			sp[-1] = sp[-1] == sp[0];
			pc++;
			break;
		case JMP:
			pc = code + a;
			break;
		case JZ:
			pc = *--sp ? pc + 2 : code + a;
			break;
		case JNZ:
			pc = *--sp ? code + a : pc + 2;
			break;
		case DUP:
			sp[0] = sp[-1];
			sp++;
			pc++;
			break;
		case POP:
			sp--;
			pc++;
			break;
		case CALL:
			sp[-1] = builtins[((uint32_t)a + sp[-1]) & 3](sp[-1]);
			pc += 2;
			break;
		case INC:
			var[a]++;
			pc += 2;
			break;
		case HALT:
			return sp > st ? sp[-1] : 0;
		default:
			abort();
		}
	}
}

/* h = h * 31 ^ i for i < var[1]; var[0] i, var[2] h */
static const int32_t hash[] = {
    PUSH,	   0,	 STORE, 0,   PUSH,  7,	STORE, 2,
    /* 8 */ LOAD,  0,	 LOAD,	1,   LT,    JZ, 29,    LOAD, 2,	  PUSH, 31,
    MUL,	   LOAD, 0,	XOR, STORE, 2,	INC,   0,    JMP, 8,
    /* 29 */ LOAD, 2,	 HALT,	0};

/* steps of Collatz for n < var[1] from 1; var[0] n, var[2] steps,
 * var[3] x */
static const int32_t collatz[] = {
    PUSH,	   1,	  STORE, 0,    PUSH, 0,	    STORE, 2,
    /* 8 */ LOAD,  0,	  LOAD,	 1,    LT,   JZ,    61,	   LOAD, 0,   STORE, 3,
    /* 19 */ LOAD, 3,	  PUSH,	 1,    EQ,   JNZ,   57,	   LOAD, 3,   PUSH,  1,
    AND,	   JZ,	  46,	 LOAD, 3,    DUP,   DUP,   ADD,	 ADD, PUSH,  1,
    ADD,	   STORE, 3,	 JMP,  53,
    /* 46 */ LOAD, 3,	  PUSH,	 1,    SHR,  STORE, 3,
    /* 53 */ INC,  2,	  JMP,	 19,
    /* 57 */ INC,  0,	  JMP,	 8,
    /* 61 */ LOAD, 2,	  HALT,	 0};

/* s += two built-ins of i ^ s, one of i, for i < var[1] (each built-in
 * chosen by its argument and the call); var[0] i, var[2] s */
static const int32_t calls[] = {PUSH,
				0,
				STORE,
				0,
				PUSH,
				0,
				STORE,
				2,
				/* 8 */ LOAD,
				0,
				LOAD,
				1,
				LT,
				JZ,
				52,
				LOAD,
				0,
				LOAD,
				2,
				XOR,
				CALL,
				0,
				LOAD,
				2,
				ADD,
				STORE,
				2,
				LOAD,
				0,
				LOAD,
				2,
				XOR,
				CALL,
				1,
				LOAD,
				2,
				ADD,
				STORE,
				2,
				LOAD,
				0,
				CALL,
				2,
				LOAD,
				2,
				XOR,
				STORE,
				2,
				INC,
				0,
				JMP,
				8,
				/* 52 */ LOAD,
				2,
				HALT,
				0};

int main(int argc, char **argv)
{
	long repeat = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	uint32_t sum = 0;

	for (long r = 0; r < repeat; r++) {
		uint32_t v[4] = {0, 20000 + (uint32_t)(r % 7), 0, 0};

		sum += run(hash, v);
		v[1] = 3000 + (uint32_t)(r % 5);
		sum ^= run(collatz, v);
		v[1] = 10000;
		sum += run(calls, v);
	}
	printf("%u\n", sum);
	return 0;
}
