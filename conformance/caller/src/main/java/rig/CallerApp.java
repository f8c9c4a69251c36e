package rig;

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.context.ApplicationContext;

/**
 * Fixed-rate caller: every period-ms, on a pool thread, LoadBalancerClient.choose(service)
 * and one GET /ping on a fresh TCP connection (no keep-alive), no retries.
 * Log line: send_epoch_ms,chosen_instance_id,outcome,latency_ms
 */
@SpringBootApplication
public class CallerApp implements ApplicationRunner {
    private static final Logger log = LoggerFactory.getLogger(CallerApp.class);

    private final LoadBalancerClient lb;
    private final ApplicationContext ctx;

    @Value("${caller.log-file:caller.csv}") String logFile;
    @Value("${caller.period-ms:50}") long periodMs;
    @Value("${caller.service-id:svc}") String serviceId;
    @Value("${caller.connect-timeout-ms:500}") int connectTimeoutMs;
    @Value("${caller.read-timeout-ms:1000}") int readTimeoutMs;
    @Value("${caller.pool-size:64}") int poolSize;

    @Value("${caller.probe-ms:0}") long probeMs;
    @Value("${caller.probe-file:caller-probe.csv}") String probeFile;

    private BufferedWriter out;

    public CallerApp(LoadBalancerClient lb, ApplicationContext ctx) {
        this.lb = lb;
        this.ctx = ctx;
    }

    public static void main(String[] args) {
        // No persistent connections: every request opens a new TCP connection.
        System.setProperty("http.keepAlive", "false");
        SpringApplication.run(CallerApp.class, args);
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        // Report which LoadBalancer cache is in use.
        for (String n : new String[] {"org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager",
                "org.springframework.cache.CacheManager"}) {
            try {
                Map<String, ?> beans = ctx.getBeansOfType(Class.forName(n));
                beans.forEach((k, v) -> log.info("RIG cache bean type={} name={} class={}", n, k, v.getClass().getName()));
                if (beans.isEmpty()) log.info("RIG cache bean type={} NONE", n);
            } catch (ClassNotFoundException e) {
                log.info("RIG cache bean type={} class not on classpath", n);
            }
        }
        log.info("RIG LoadBalancerClient class={}", lb.getClass().getName());
        out = new BufferedWriter(new FileWriter(logFile, true), 1 << 16);
        ExecutorService pool = Executors.newFixedThreadPool(poolSize, r -> {
            Thread t = new Thread(r, "rig-req");
            t.setDaemon(true);
            return t;
        });
        ScheduledExecutorService sched = Executors.newScheduledThreadPool(2);
        sched.scheduleAtFixedRate(() -> pool.execute(this::oneRequest), 0, periodMs, TimeUnit.MILLISECONDS);
        sched.scheduleAtFixedRate(this::flush, 50, 50, TimeUnit.MILLISECONDS);
        if (probeMs > 0) {
            Probe.start(ctx, serviceId, probeMs, probeFile);
        }
        log.info("RIG caller started: period={}ms service={} log={}", periodMs, serviceId, logFile);
    }

    private synchronized void write(String line) {
        try {
            out.write(line);
            out.write('\n');
        } catch (IOException e) {
            log.error("log write failed", e);
        }
    }

    private synchronized void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            log.error("log flush failed", e);
        }
    }

    private void oneRequest() {
        long send = System.currentTimeMillis();
        long t0 = System.nanoTime();
        String chosen = "";
        String outcome;
        try {
            ServiceInstance si = lb.choose(serviceId);
            if (si == null) {
                outcome = "no_instance";
            } else {
                chosen = si.getInstanceId();
                URI uri = URI.create(si.getUri().toString() + "/ping");
                HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
                c.setConnectTimeout(connectTimeoutMs);
                c.setReadTimeout(readTimeoutMs);
                c.setUseCaches(false);
                c.setRequestProperty("Connection", "close");
                try {
                    int code = c.getResponseCode();
                    InputStream is = code < 400 ? c.getInputStream() : c.getErrorStream();
                    if (is != null) {
                        is.readAllBytes();
                        is.close();
                    }
                    outcome = code == 200 ? "ok" : "http_" + code;
                } finally {
                    c.disconnect();
                }
            }
        } catch (ConnectException e) {
            outcome = "refused";
        } catch (SocketTimeoutException e) {
            outcome = "timeout";
        } catch (Throwable e) {
            outcome = "error_" + e.getClass().getSimpleName();
        }
        long lat = (System.nanoTime() - t0) / 1_000_000L;
        write(send + "," + (chosen == null ? "" : chosen) + "," + outcome + "," + lat);
    }
}
