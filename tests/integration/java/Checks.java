import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;

/**
 * Shared by the Java client scenarios (ProducerChecks, GroupChecks,
 * AdminChecks): one line per check on stdout, "PASS name" or
 * "FAIL name: detail", read by test_java_clients.py; a program ends with
 * "DONE passed=N failed=N" and exits 1 when any check failed.
 *
 * Names must be unique within a program and free of ':' (the Python side
 * splits on the first ": ").
 */
final class Checks {
    private int passed;
    private int failed;
    private final String prefix;

    Checks(String prefix) {
        this.prefix = prefix;
    }

    synchronized boolean check(String name, boolean ok, Object detail) {
        String d = detail == null ? "" : String.valueOf(detail).replace('\n', ' ');
        if (d.length() > 600) d = d.substring(0, 600) + "...";
        if (ok) {
            passed++;
            System.out.println("PASS " + prefix + name);
        } else {
            failed++;
            System.out.println("FAIL " + prefix + name + (d.isEmpty() ? "" : ": " + d));
        }
        System.out.flush();
        return ok;
    }

    boolean check(String name, boolean ok) {
        return check(name, ok, "");
    }

    boolean equal(String name, Object actual, Object expected) {
        return check(name, Objects.equals(actual, expected), "got " + actual + ", want " + expected);
    }

    boolean fail(String name, Object detail) {
        return check(name, false, detail);
    }

    /** A check that fails with the exception when body throws. */
    interface Body {
        void run() throws Exception;
    }

    boolean noException(String name, Body body) {
        try {
            body.run();
            return check(name, true);
        } catch (Throwable t) {
            return fail(name, describe(t));
        }
    }

    /** Runs a group of checks; an escaping exception fails the group (and the
     * checks after it in the group do not run). */
    void section(String name, Body body) {
        System.out.println("---- " + prefix + name);
        long t0 = System.nanoTime();
        try {
            body.run();
            System.out.println("---- " + prefix + name + " took " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        } catch (Throwable t) {
            fail(name + " completed", describe(t));
            StringWriter w = new StringWriter();
            t.printStackTrace(new PrintWriter(w));
            System.err.println(w);
        }
    }

    /** Expects body to throw (directly or as the cause of an
     * ExecutionException) an exception of class want. */
    boolean throwsCause(String name, Class<? extends Throwable> want, Body body) {
        try {
            body.run();
            return fail(name, "no exception, want " + want.getSimpleName());
        } catch (Throwable t) {
            Throwable c = unwrap(t);
            return check(name, want.isInstance(c), "got " + describe(c) + ", want " + want.getSimpleName());
        }
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException)
               && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static String describe(Throwable t) {
        t = unwrap(t);
        String s = t.getClass().getName() + ": " + t.getMessage();
        if (t.getCause() != null && t.getCause() != t) s += " (cause " + t.getCause() + ")";
        return s;
    }

    /** Polls until cond is true or timeout passes; returns cond's last value. */
    static boolean waitUntil(Duration timeout, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (cond.getAsBoolean()) return true;
            if (System.nanoTime() > deadline) return false;
            Thread.sleep(20);
        }
    }

    static Properties props(String bootstrap, String... kv) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        for (int i = 0; i + 1 < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return p;
    }

    int finish() {
        System.out.println("DONE passed=" + passed + " failed=" + failed);
        System.out.flush();
        return failed == 0 && passed > 0 ? 0 : 1;
    }
}
