/*
 * Attack: use another domain's System V IPC objects, which only their
 * mode bits protect from a process under the same uid. SELinux labels
 * each object with its creator's domain and checks every use: `shm {
 * associate read }` to attach a segment, `msgq { associate read }` and
 * `msg { receive }` to take a message, `sem { associate read write }` to
 * take a semaphore.
 *
 * Usage: sysv_ipc make KEY (the victim): a shared memory segment holding
 * "secret", a message queue holding the message "secret" three times
 * and a set of one semaphore at 3, each with mode 0600, under key KEY, then exits
 * (they outlive it). remove KEY removes them.
 *
 * Usage: sysv_ipc shm KEY: attaches KEY's segment and reads it; msg KEY
 * receives KEY's message; sem KEY takes KEY's semaphore (without
 * waiting). Each succeeds if it got what the victim put there.
 *
 * Usage: sysv_ipc shm-id KEY: attaches KEY's segment by the id
 * /proc/sysvipc/shm lists for it (no shmget, whose `associate` SELinux
 * checks first) and reads it; destroy KEY removes it so (IPC_RMID,
 * SELinux's `shm { destroy }`). shm-make KEY makes only the segment;
 * own KEY makes a segment, writes it, finds it again by key, reads it,
 * reads its attributes and removes it (what a domain does with its own).
 * sem-id KEY takes KEY's semaphore by the id /proc/sysvipc/sem lists;
 * own-sem KEY makes a set, sets, takes and reads its semaphore, and
 * removes it. msg-id KEY receives KEY's message by the id
 * /proc/sysvipc/msg lists; own-msg KEY makes a queue, sends a message,
 * receives it and removes the queue. shm-stat KEY reads KEY's segment's
 * attributes by its index in the kernel's table (SHM_STAT_ANY, which
 * reads no mode bits; SELinux's `shm { getattr associate }`), named
 * with bits above the index set, which the kernel ignores.
 */
#include "adversarial.h"

#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

struct message {
    long type;
    char text[16];
};

static int make(key_t key) {
    int shm = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
    if (shm < 0) verdict(BROKEN, "shmget: %s", strerror(errno));
    char *p = shmat(shm, NULL, 0);
    if (p == (void *)-1) verdict(BROKEN, "shmat: %s", strerror(errno));
    strcpy(p, "secret");
    shmdt(p);
    int q = msgget(key, IPC_CREAT | IPC_EXCL | 0600);
    if (q < 0) verdict(BROKEN, "msgget: %s", strerror(errno));
    struct message m = {.type = 1, .text = "secret"};
    /* Three receivers may take one each (a scenario's three attempts). */
    for (int i = 0; i < 3; i++)
        if (msgsnd(q, &m, sizeof m.text, 0) != 0) verdict(BROKEN, "msgsnd: %s", strerror(errno));
    int sem = semget(key, 1, IPC_CREAT | IPC_EXCL | 0600);
    if (sem < 0) verdict(BROKEN, "semget: %s", strerror(errno));
    /* Three takers may take it (a scenario's three attempts). */
    if (semctl(sem, 0, SETVAL, 3) != 0) verdict(BROKEN, "semctl: %s", strerror(errno));
    verdict(SUCCEEDED, "made segment %d, queue %d, semaphores %d", shm, q, sem);
}

static int make_segment(key_t key) {
    int shm = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
    if (shm < 0) FAILED(errno, "shmget");
    char *p = shmat(shm, NULL, 0);
    if (p == (void *)-1) FAILED(errno, "shmat of segment %d", shm);
    strcpy(p, "secret");
    shmdt(p);
    verdict(SUCCEEDED, "made segment %d", shm);
}

static int own_segment(key_t key) {
    int shm = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
    if (shm < 0) FAILED(errno, "shmget");
    char *p = shmat(shm, NULL, 0);
    if (p == (void *)-1) FAILED(errno, "shmat of segment %d", shm);
    strcpy(p, "mine");
    shmdt(p);
    int again = shmget(key, 0, 0);
    if (again != shm) FAILED(errno, "shmget of key %d again (%d)", (int)key, again);
    p = shmat(shm, NULL, SHM_RDONLY);
    if (p == (void *)-1) FAILED(errno, "shmat of segment %d, read-only", shm);
    if (strcmp(p, "mine") != 0) verdict(BROKEN, "segment %d holds \"%.16s\"", shm, p);
    shmdt(p);
    struct shmid_ds ds;
    if (shmctl(shm, IPC_STAT, &ds) != 0) FAILED(errno, "IPC_STAT of segment %d", shm);
    if (shmctl(shm, IPC_RMID, NULL) != 0) FAILED(errno, "IPC_RMID of segment %d", shm);
    verdict(SUCCEEDED, "made, used and removed segment %d", shm);
}

/* KEY's object's id as `list` (/proc/sysvipc/shm, sem) lists it, or -1. */
static int listed_in(const char *list, key_t key) {
    FILE *f = fopen(list, "r");
    if (!f) verdict(BROKEN, "%s: %s", list, strerror(errno));
    char line[512];
    int id = -1;
    while (fgets(line, sizeof line, f)) {
        long k;
        int i;
        if (sscanf(line, "%ld %d", &k, &i) == 2 && (key_t)k == key) id = i;
    }
    fclose(f);
    return id;
}

static int listed_id(key_t key) { return listed_in("/proc/sysvipc/shm", key); }

static int take_by_id(key_t key) {
    int sem = listed_in("/proc/sysvipc/sem", key);
    if (sem < 0) verdict(BROKEN, "no semaphore set of key %d listed", (int)key);
    struct sembuf op = {.sem_num = 0, .sem_op = -1, .sem_flg = IPC_NOWAIT};
    if (semop(sem, &op, 1) != 0) FAILED(errno, "semop on set %d", sem);
    verdict(SUCCEEDED, "took the semaphore of set %d, by its id", sem);
}

static int receive_by_id(key_t key) {
    int q = listed_in("/proc/sysvipc/msg", key);
    if (q < 0) verdict(BROKEN, "no queue of key %d listed", (int)key);
    struct message m;
    if (msgrcv(q, &m, sizeof m.text, 0, IPC_NOWAIT) < 0) FAILED(errno, "msgrcv from queue %d", q);
    verdict(SUCCEEDED, "received \"%.16s\" from queue %d, by its id", m.text, q);
}

static int own_queue(key_t key) {
    int q = msgget(key, IPC_CREAT | IPC_EXCL | 0600);
    if (q < 0) FAILED(errno, "msgget");
    struct message m = {.type = 1, .text = "mine"};
    if (msgsnd(q, &m, sizeof m.text, IPC_NOWAIT) != 0) FAILED(errno, "msgsnd to queue %d", q);
    struct message got;
    if (msgrcv(q, &got, sizeof got.text, 0, IPC_NOWAIT) < 0) FAILED(errno, "msgrcv from queue %d", q);
    if (strcmp(got.text, "mine") != 0) verdict(BROKEN, "queue %d gave \"%.16s\"", q, got.text);
    if (msgctl(q, IPC_RMID, NULL) != 0) FAILED(errno, "IPC_RMID of queue %d", q);
    verdict(SUCCEEDED, "made, used and removed queue %d", q);
}

static int own_set(key_t key) {
    int sem = semget(key, 1, IPC_CREAT | IPC_EXCL | 0600);
    if (sem < 0) FAILED(errno, "semget");
    if (semctl(sem, 0, SETVAL, 2) != 0) FAILED(errno, "SETVAL of set %d", sem);
    if (semget(key, 0, 0) != sem) FAILED(errno, "semget of key %d again", (int)key);
    struct sembuf op = {.sem_num = 0, .sem_op = -1, .sem_flg = IPC_NOWAIT};
    if (semop(sem, &op, 1) != 0) FAILED(errno, "semop on set %d", sem);
    int v = semctl(sem, 0, GETVAL);
    if (v != 1) FAILED(errno, "GETVAL of set %d (%d)", sem, v);
    if (semctl(sem, 0, IPC_RMID) != 0) FAILED(errno, "IPC_RMID of set %d", sem);
    verdict(SUCCEEDED, "made, used and removed set %d", sem);
}

static int read_by_id(key_t key) {
    int shm = listed_id(key);
    if (shm < 0) verdict(BROKEN, "no segment of key %d listed", (int)key);
    char *p = shmat(shm, NULL, SHM_RDONLY);
    if (p == (void *)-1) FAILED(errno, "shmat of segment %d", shm);
    if (strcmp(p, "secret") != 0) verdict(BROKEN, "segment %d holds \"%.16s\"", shm, p);
    verdict(SUCCEEDED, "read \"%s\" in segment %d, by its id", p, shm);
}

#ifndef SHM_STAT_ANY
#define SHM_STAT_ANY 15
#endif

static int stat_by_index(key_t key) {
    int shm = listed_id(key);
    if (shm < 0) verdict(BROKEN, "no segment of key %d listed", (int)key);
    struct shmid_ds ds;
    int index = (shm & 0x7fff) | (1 << 24);
    if (shmctl(index, SHM_STAT_ANY, &ds) < 0) FAILED(errno, "SHM_STAT_ANY of index %#x", index);
    if (ds.shm_perm.__key != key) verdict(BROKEN, "index %#x holds key %d", index, (int)ds.shm_perm.__key);
    verdict(SUCCEEDED, "read segment %d's attributes (%zu bytes, uid %d) by index %#x", shm, (size_t)ds.shm_segsz,
            (int)ds.shm_perm.uid, index);
}

static int destroy(key_t key) {
    int shm = listed_id(key);
    if (shm < 0) verdict(BROKEN, "no segment of key %d listed", (int)key);
    if (shmctl(shm, IPC_RMID, NULL) != 0) FAILED(errno, "IPC_RMID of segment %d", shm);
    verdict(SUCCEEDED, "removed segment %d", shm);
}

static int remove_all(key_t key) {
    int shm = shmget(key, 0, 0), q = msgget(key, 0), sem = semget(key, 0, 0);
    if (shm >= 0) shmctl(shm, IPC_RMID, NULL);
    if (q >= 0) msgctl(q, IPC_RMID, NULL);
    if (sem >= 0) semctl(sem, 0, IPC_RMID);
    verdict(SUCCEEDED, "removed");
}

static int read_segment(key_t key) {
    int shm = shmget(key, 0, 0);
    if (shm < 0) FAILED(errno, "shmget of key %d", (int)key);
    char *p = shmat(shm, NULL, SHM_RDONLY);
    if (p == (void *)-1) FAILED(errno, "shmat of segment %d", shm);
    if (strcmp(p, "secret") != 0) verdict(BROKEN, "segment %d holds \"%.16s\"", shm, p);
    verdict(SUCCEEDED, "read \"%s\" in segment %d", p, shm);
}

static int receive(key_t key) {
    int q = msgget(key, 0);
    if (q < 0) FAILED(errno, "msgget of key %d", (int)key);
    struct message m;
    if (msgrcv(q, &m, sizeof m.text, 0, IPC_NOWAIT) < 0) FAILED(errno, "msgrcv from queue %d", q);
    verdict(SUCCEEDED, "received \"%.16s\" from queue %d", m.text, q);
}

static int take(key_t key) {
    int sem = semget(key, 0, 0);
    if (sem < 0) FAILED(errno, "semget of key %d", (int)key);
    struct sembuf op = {.sem_num = 0, .sem_op = -1, .sem_flg = IPC_NOWAIT};
    if (semop(sem, &op, 1) != 0) FAILED(errno, "semop on set %d", sem);
    verdict(SUCCEEDED, "took the semaphore of set %d", sem);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: sysv_ipc make|remove|shm|msg|sem|shm-id|destroy|shm-make|own|sem-id|own-sem|msg-id|own-msg KEY\n");
        return BROKEN;
    }
    key_t key = (key_t)strtol(argv[2], NULL, 10);
    if (!strcmp(argv[1], "make")) return make(key);
    if (!strcmp(argv[1], "remove")) return remove_all(key);
    if (!strcmp(argv[1], "shm")) return read_segment(key);
    if (!strcmp(argv[1], "msg")) return receive(key);
    if (!strcmp(argv[1], "sem")) return take(key);
    if (!strcmp(argv[1], "shm-id")) return read_by_id(key);
    if (!strcmp(argv[1], "destroy")) return destroy(key);
    if (!strcmp(argv[1], "shm-stat")) return stat_by_index(key);
    if (!strcmp(argv[1], "shm-make")) return make_segment(key);
    if (!strcmp(argv[1], "own")) return own_segment(key);
    if (!strcmp(argv[1], "sem-id")) return take_by_id(key);
    if (!strcmp(argv[1], "own-sem")) return own_set(key);
    if (!strcmp(argv[1], "msg-id")) return receive_by_id(key);
    if (!strcmp(argv[1], "own-msg")) return own_queue(key);
    verdict(BROKEN, "unknown method %s", argv[1]);
}
