/*
 * Attack: get a userfaultfd, the exploit writer's tool to stall the
 * kernel mid-copy from the process's memory until it answers the fault.
 * SELinux checks `anon_inode { create }` when one is made.
 *
 * Usage: userfault call: the userfaultfd call (user-mode faults only, as
 * an unprivileged process may make one). userfault device: the ioctl
 * USERFAULTFD_IOC_NEW on /dev/userfaultfd (root: the device is 0600),
 * which makes one that handles the kernel's faults too. Each succeeds
 * if a userfaultfd was made and answers UFFDIO_API.
 */
#include "adversarial.h"

#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

int main(int argc, char **argv) {
    int uffd;
    if (argc == 2 && !strcmp(argv[1], "call")) {
        uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
        if (uffd < 0) FAILED(errno, "userfaultfd");
    } else if (argc == 2 && !strcmp(argv[1], "device")) {
        int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
        if (dev < 0) {
            if (errno == ENOENT) verdict(UNSUPPORTED, "no /dev/userfaultfd");
            verdict(BROKEN, "opening /dev/userfaultfd: %s", strerror(errno));
        }
        uffd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC);
        if (uffd < 0) FAILED(errno, "USERFAULTFD_IOC_NEW");
    } else {
        fprintf(stderr, "usage: userfault call|device\n");
        return BROKEN;
    }
    struct uffdio_api api = {.api = UFFD_API};
    if (ioctl(uffd, UFFDIO_API, &api) != 0) verdict(BROKEN, "UFFDIO_API: %s", strerror(errno));
    verdict(SUCCEEDED, "made a userfaultfd (%s)", argv[1]);
}
