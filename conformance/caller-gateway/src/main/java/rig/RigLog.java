package rig;

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.io.IOException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The caller log every rig caller writes: one line per request,
 * send_epoch_ms,chosen_instance_id,outcome,latency_ms, buffered and flushed every 50 ms.
 */
final class RigLog {
    private static final Logger log = LoggerFactory.getLogger(RigLog.class);
    private final BufferedWriter out;

    RigLog(String path, ScheduledExecutorService sched) throws IOException {
        out = new BufferedWriter(new FileWriter(path, true), 1 << 16);
        sched.scheduleAtFixedRate(this::flush, 50, 50, TimeUnit.MILLISECONDS);
    }

    synchronized void write(long send, String chosen, String outcome, long latencyMs) {
        try {
            out.write(send + "," + (chosen == null ? "" : chosen) + "," + outcome + "," + latencyMs + "\n");
        } catch (IOException e) {
            log.error("log write failed", e);
        }
    }

    synchronized void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            log.error("log flush failed", e);
        }
    }

    /** refused / timeout / error_<Exception> from the first ConnectException or
     *  SocketTimeoutException in the cause chain, else the outermost exception's simple name. */
    static String failure(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            // Netty's ConnectTimeoutException is a ConnectException: a time-out, not a refusal.
            if (c.getClass().getSimpleName().equals("ConnectTimeoutException")) return "timeout";
            if (c instanceof java.net.ConnectException) return "refused";
            if (c instanceof java.net.SocketTimeoutException) return "timeout";
        }
        return "error_" + e.getClass().getSimpleName();
    }
}
