/*
 * exec_memory MODE [FILE]: runs code it wrote itself, which SELinux
 * allows only with `process execmem` (and `execheap`, `execstack`, or
 * `execmod` on FILE, by where the code lies). The code is one `ret`.
 *   anon         mmap of anonymous memory, readable, writable, executable
 *   mprotect     anonymous memory written, then mprotect to executable
 *   heap         a page of the heap (sbrk), mprotect to executable
 *   stack        the page of the stack holding a local, mprotect
 *   shm          a System V segment attached with SHM_EXEC
 *   file         FILE mapped privately, written, mprotect to executable
 *   memfd        a memfd written, then mapped shared and executable (the
 *                double mapping: SELinux checks `execute` on the memfd)
 *   personality  READ_IMPLIES_EXEC, then readable anonymous memory
 * Succeeds (exit 0) once the code ran.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <stdint.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/shm.h>

#define PAGE 4096
static const unsigned char RET = 0xc3;

static void run(unsigned char *code, const char *where) {
    ((void (*)(void))code)();
    verdict(SUCCEEDED, "ran code it wrote in %s", where);
}

static unsigned char *page_of(void *p) { return (unsigned char *)((uintptr_t)p & ~(uintptr_t)(PAGE - 1)); }

int main(int argc, char **argv) {
    if (argc < 2) verdict(BROKEN, "usage: exec_memory MODE [FILE]");
    const char *mode = argv[1];
    if (!strcmp(mode, "anon")) {
        unsigned char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) FAILED(errno, "mmap rwx");
        *p = RET;
        run(p, "anonymous memory");
    }
    if (!strcmp(mode, "mprotect")) {
        unsigned char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) FAILED(errno, "mmap rw");
        *p = RET;
        if (mprotect(p, PAGE, PROT_READ | PROT_EXEC)) FAILED(errno, "mprotect r-x");
        run(p, "anonymous memory made executable");
    }
    if (!strcmp(mode, "heap")) {
        /* The break on a page boundary: the kernel counts a mapping as
         * the heap only if it ends at or below the break. */
        unsigned char *now = sbrk(0);
        intptr_t pad = (intptr_t)((PAGE - ((uintptr_t)now & (PAGE - 1))) & (PAGE - 1));
        if (sbrk(pad + 2 * PAGE) == (void *)-1) FAILED(errno, "sbrk");
        unsigned char *p = now + pad;
        *p = RET;
        if (mprotect(p, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC)) FAILED(errno, "mprotect of the heap");
        run(p, "the heap");
    }
    if (!strcmp(mode, "stack")) {
        unsigned char local[2 * PAGE];
        unsigned char *p = page_of(local + PAGE);
        *p = RET;
        if (mprotect(p, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC)) FAILED(errno, "mprotect of the stack");
        run(p, "the stack");
    }
    if (!strcmp(mode, "shm")) {
        /* Executable by its owner: SHM_EXEC needs it. */
        int id = shmget(IPC_PRIVATE, PAGE, IPC_CREAT | 0700);
        if (id < 0) verdict(BROKEN, "shmget: %s", strerror(errno));
        unsigned char *p = shmat(id, NULL, SHM_EXEC);
        int err = errno;
        shmctl(id, IPC_RMID, NULL);
        if (p == (void *)-1) FAILED(err, "shmat with SHM_EXEC");
        *p = RET;
        run(p, "a System V segment");
    }
    if (!strcmp(mode, "file")) {
        if (argc != 3) verdict(BROKEN, "usage: exec_memory file FILE");
        int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0) FAILED(errno, "open %s", argv[2]);
        unsigned char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) FAILED(errno, "mmap %s", argv[2]);
        *p = RET;
        if (mprotect(p, PAGE, PROT_READ | PROT_EXEC)) FAILED(errno, "mprotect of the written mapping of %s", argv[2]);
        run(p, "a written file mapping");
    }
    if (!strcmp(mode, "memfd")) {
        int fd = memfd_create("code", MFD_CLOEXEC);
        if (fd < 0) FAILED(errno, "memfd_create");
        if (write(fd, &RET, 1) != 1 || ftruncate(fd, PAGE) != 0) verdict(BROKEN, "writing the memfd: %s", strerror(errno));
        unsigned char *p = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) FAILED(errno, "mmap of the memfd r-x");
        run(p, "a memfd");
    }
    if (!strcmp(mode, "personality")) {
        if (personality(READ_IMPLIES_EXEC) < 0) FAILED(errno, "personality(READ_IMPLIES_EXEC)");
        if (!(personality(0xffffffff) & READ_IMPLIES_EXEC)) FAILED(EPERM, "personality: not set");
        unsigned char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) FAILED(errno, "mmap rw");
        *p = RET;
        run(p, "readable memory under READ_IMPLIES_EXEC");
    }
    verdict(BROKEN, "unknown mode %s", mode);
}
