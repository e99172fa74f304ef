/*
 * termios2-shim: a test-only LD_PRELOAD library for scripts/pi-smoke.
 *
 * Why: qemu-user (7.2 in Debian 12, 10.0.2 in bookworm-backports) does not
 * emulate the TCGETS2/TCSETS2 ioctls (termios2) that the serial-port
 * library calls when it opens a port, so an emulated chessclockd cannot
 * open the simulated units' PTYs ("Function not implemented"). A Pi's
 * kernel has them. This library, loaded into the emulated process only
 * (qemu's -E LD_PRELOAD=...), answers those calls with the plain
 * TCGETS/TCSETS ones that qemu does emulate. It is never packaged or used
 * outside the smoke test.
 *
 * The only speed it passes through is one of the standard Bxxx rates (the
 * protocol's 115200 is one); a termios2 request for another speed (BOTHER)
 * is refused with EINVAL rather than silently changed.
 */
#define _GNU_SOURCE
#include <asm/ioctls.h>
#include <asm/termbits.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

int ioctl(int fd, unsigned long request, ...);

typedef int (*ioctl_fn)(int, unsigned long, ...);

static ioctl_fn real_ioctl(void) {
    static ioctl_fn real;
    if (!real)
        real = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
    return real;
}

static const struct { speed_t code; unsigned int rate; } rates[] = {
    {B9600, 9600}, {B19200, 19200}, {B38400, 38400}, {B57600, 57600},
    {B115200, 115200}, {B230400, 230400}, {B460800, 460800},
    {B500000, 500000}, {B921600, 921600}, {B1000000, 1000000},
};

static int rate_of(speed_t code, unsigned int *rate) {
    for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (rates[i].code == code) { *rate = rates[i].rate; return 0; }
    return -1;
}

static int code_of(unsigned int rate, speed_t *code) {
    for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (rates[i].rate == rate) { *code = rates[i].code; return 0; }
    return -1;
}

int ioctl(int fd, unsigned long request, ...) {
    va_list args;
    va_start(args, request);
    void *argument = va_arg(args, void *);
    va_end(args);
    ioctl_fn real = real_ioctl();
    if (!real) { errno = ENOSYS; return -1; }
    /* The kernel reads the request as 32 bits; callers may pass it
     * sign-extended to 64 (qemu logged 0xffffffff802c542a). */
    unsigned int command = (unsigned int)request;

    if (command == TCGETS2) {
        struct termios2 *wide = argument;
        struct termios plain;
        int result = real(fd, TCGETS, &plain);
        if (result != 0)
            return result;
        memset(wide, 0, sizeof *wide);
        memcpy(wide, &plain, sizeof plain);
        unsigned int rate = 0;
        if (rate_of(plain.c_cflag & CBAUD, &rate) == 0)
            wide->c_ispeed = wide->c_ospeed = rate;
        return 0;
    }
    if (command == TCSETS2 || command == TCSETSW2 || command == TCSETSF2) {
        const struct termios2 *wide = argument;
        struct termios plain;
        memcpy(&plain, wide, sizeof plain);
        if ((plain.c_cflag & CBAUD) == BOTHER) {
            speed_t code;
            if (code_of(wide->c_ospeed, &code) != 0) { errno = EINVAL; return -1; }
            plain.c_cflag = (plain.c_cflag & ~CBAUD) | code;
        }
        unsigned long plain_request = command == TCSETS2 ? TCSETS
                                      : command == TCSETSW2 ? TCSETSW : TCSETSF;
        return real(fd, plain_request, &plain);
    }
    return real(fd, request, argument);
}
